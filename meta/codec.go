package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
)

// Record layout, so a flipped byte anywhere is detected rather than parsed:
//
//	magic "TSM" | format 1 | jsonLen u32 | json | inlineLen u32 | inline | crc32c u32
//
// The CRC covers everything before it. CRC-32C is hardware-accelerated and
// catches all burst errors up to 32 bits, which is what bitrot looks like.
const (
	magic        = "TSM"
	formatV1     = 1
	maxRecordLen = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal encodes v (an *Object, *Upload or *Bucket) with inline as the
// trailing blob.
func Marshal(v any, inline []byte) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("meta marshal: %w", err)
	}
	buf := make([]byte, 0, 4+4+len(js)+4+len(inline)+4)
	buf = append(buf, magic...)
	buf = append(buf, formatV1)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(js)))
	buf = append(buf, js...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(inline)))
	buf = append(buf, inline...)
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli)), nil
}

// Unmarshal verifies and decodes a record made by Marshal into v and returns
// its inline blob. Any damage yields an error wrapping ErrCorrupt.
func Unmarshal(b []byte, v any) (inline []byte, err error) {
	if len(b) < 4+4+4+4 || len(b) > maxRecordLen || string(b[:3]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	if b[3] != formatV1 {
		return nil, fmt.Errorf("%w: unknown format %d", ErrCorrupt, b[3])
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	rest := body[4:]
	jl := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(jl)+4 > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	js, rest := rest[:jl], rest[jl:]
	il := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(il) != uint64(len(rest)) {
		return nil, fmt.Errorf("%w: bad inline length", ErrCorrupt)
	}
	if err := json.Unmarshal(js, v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if il == 0 {
		return nil, nil
	}
	return append([]byte(nil), rest...), nil
}

// MarshalObject encodes o with its Inline blob.
func MarshalObject(o *Object) ([]byte, error) { return Marshal(o, o.Inline) }

// UnmarshalObject decodes and verifies an object record.
func UnmarshalObject(b []byte) (*Object, error) {
	var o Object
	in, err := Unmarshal(b, &o)
	if err != nil {
		return nil, err
	}
	o.Inline = in
	return &o, nil
}
