package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
)

// Record layout, so a flipped byte anywhere is detected rather than parsed:
//
//	magic "TSM" | format | bodyLen u32 | body | inlineLen u32 | inline | crc32c u32
//
// The body is JSON in format 1 and MessagePack in format 2, which object
// records are written in (binary.go); format 1 object records, written
// before, are still read. The CRC covers everything before it. CRC-32C is
// hardware-accelerated and catches all burst errors up to 32 bits, which
// is what bitrot looks like.
const (
	magic        = "TSM"
	formatV1     = 1
	formatV2     = 2
	maxRecordLen = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal encodes v (an *Upload, *Bucket or other JSON-encodable record)
// in format 1 with inline as the trailing blob.
func Marshal(v any, inline []byte) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("meta marshal: %w", err)
	}
	return frame(formatV1, js, inline), nil
}

// frame wraps a record body and its inline blob in the record layout.
func frame(format byte, body, inline []byte) []byte {
	buf := make([]byte, 0, 4+4+len(body)+4+len(inline)+4)
	buf = append(buf, magic...)
	buf = append(buf, format)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)))
	buf = append(buf, body...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(inline)))
	buf = append(buf, inline...)
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// unframe verifies a record's layout and checksum and returns its format,
// body and inline blob (sharing b's memory). Any damage yields an error
// wrapping ErrCorrupt.
func unframe(b []byte) (format byte, body, inline []byte, err error) {
	if len(b) < 4+4+4+4 || len(b) > maxRecordLen || string(b[:3]) != magic {
		return 0, nil, nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	if format = b[3]; format != formatV1 && format != formatV2 {
		return 0, nil, nil, fmt.Errorf("%w: unknown format %d", ErrCorrupt, format)
	}
	all, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(all, castagnoli) != sum {
		return 0, nil, nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	rest := all[4:]
	bl := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(bl)+4 > uint64(len(rest)) {
		return 0, nil, nil, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	body, rest = rest[:bl], rest[bl:]
	il := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(il) != uint64(len(rest)) {
		return 0, nil, nil, fmt.Errorf("%w: bad inline length", ErrCorrupt)
	}
	return format, body, rest, nil
}

// Unmarshal verifies and decodes a format 1 record made by Marshal into v
// and returns its inline blob. Any damage yields an error wrapping
// ErrCorrupt. Object records are read with UnmarshalObject.
func Unmarshal(b []byte, v any) (inline []byte, err error) {
	format, body, in, err := unframe(b)
	if err != nil {
		return nil, err
	}
	if format != formatV1 {
		return nil, fmt.Errorf("%w: format %d where a JSON record belongs", ErrCorrupt, format)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return cloneInline(in), nil
}

func cloneInline(in []byte) []byte {
	if len(in) == 0 {
		return nil
	}
	return append([]byte(nil), in...)
}

// MarshalObject encodes o with its Inline blob, in format 2.
func MarshalObject(o *Object) ([]byte, error) {
	body, err := o.MarshalMsg(make([]byte, 0, o.Msgsize()))
	if err != nil {
		return nil, fmt.Errorf("meta marshal object: %w", err)
	}
	return frame(formatV2, body, o.Inline), nil
}

// UnmarshalEntry decodes and verifies an object record as a listing line
// (EntryOf), with the bucket the record names. It checks what
// UnmarshalObject checks of the whole record (frame, checksum, a well
// formed body), but decodes only the fields a listing shows: a listing
// decodes a record for every key it passes.
func UnmarshalEntry(b []byte) (bucket string, e Entry, err error) {
	format, body, _, err := unframe(b)
	if err != nil {
		return "", Entry{}, err
	}
	if format == formatV1 {
		o, err := UnmarshalObject(b)
		if err != nil {
			return "", Entry{}, err
		}
		return o.Bucket, EntryOf(o), nil
	}
	var v listView
	rest, err := v.UnmarshalMsg(body)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d bytes after the record", len(rest))
	}
	if err != nil {
		return "", Entry{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	alg, typ := checksumKind(v.Headers)
	return v.Bucket, Entry{Key: v.Key, Stamp: v.Stamp, Deleted: v.Deleted, DeleteMarker: v.DeleteMarker, Size: v.Size, ETag: v.ETag,
		ModTime: v.ModTime, StorageClass: v.StorageClass, ChecksumAlgorithm: alg, ChecksumType: typ}, nil
}

// UnmarshalObject decodes and verifies an object record of either format.
func UnmarshalObject(b []byte) (*Object, error) {
	format, body, in, err := unframe(b)
	if err != nil {
		return nil, err
	}
	var o Object
	switch format {
	case formatV1:
		err = json.Unmarshal(body, &o)
	default:
		var rest []byte
		rest, err = o.UnmarshalMsg(body)
		if err == nil && len(rest) != 0 {
			err = fmt.Errorf("%d bytes after the record", len(rest))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	o.Inline = cloneInline(in)
	return &o, nil
}

// MaxVersions bounds the records one MarshalVersions answer carries: a
// peer's current record and the versions it keeps (storage.MaxKept).
const MaxVersions = 16

// MarshalVersions encodes the records of one key, current first, each
// MarshalObject record after its length as a uvarint.
func MarshalVersions(os []*Object) ([]byte, error) {
	return marshalList("versions", os, MaxVersions)
}

// UnmarshalVersions decodes and verifies what MarshalVersions encoded;
// any damage, an empty list included, is ErrCorrupt.
func UnmarshalVersions(b []byte) ([]*Object, error) {
	return unmarshalList("versions", b, MaxVersions)
}

// MaxBatch bounds the records one MarshalBatch carries: the keys of one
// S3 DeleteObjects request.
const MaxBatch = 1000

// MarshalBatch encodes records of several keys, framed as MarshalVersions
// frames one key's.
func MarshalBatch(os []*Object) ([]byte, error) {
	return marshalList("batch", os, MaxBatch)
}

// UnmarshalBatch decodes and verifies what MarshalBatch encoded; any
// damage, an empty list included, is ErrCorrupt.
func UnmarshalBatch(b []byte) ([]*Object, error) {
	return unmarshalList("batch", b, MaxBatch)
}

func marshalList(what string, os []*Object, most int) ([]byte, error) {
	if len(os) > most {
		return nil, fmt.Errorf("meta marshal %s: %d records, at most %d", what, len(os), most)
	}
	var out []byte
	for _, o := range os {
		rec, err := MarshalObject(o)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
	}
	return out, nil
}

func unmarshalList(what string, b []byte, most int) ([]*Object, error) {
	var out []*Object
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) || len(out) == most {
			return nil, fmt.Errorf("%w: %s framing", ErrCorrupt, what)
		}
		o, err := UnmarshalObject(b[w : w+int(n)])
		if err != nil {
			return nil, err
		}
		out = append(out, o)
		b = b[w+int(n):]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no records", ErrCorrupt)
	}
	return out, nil
}
