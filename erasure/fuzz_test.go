package erasure

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzDecode damages shard files (bit flips and truncations) and decodes a
// range. Decode must never return wrong bytes: on success the output is the
// range exactly, on error a prefix of it; and with at most m shards damaged
// it must succeed.
//
// damage is read as triples (op, where, mask): op picks the shard and, with
// its top bit, truncation instead of a flip; where scales to a position in
// the file; mask is xored in (made non-zero).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello, erasure coded world"), []byte{}, uint8(2), uint8(5), uint16(0), uint16(0))
	f.Add(bytes.Repeat([]byte{7}, 300), []byte{0, 10, 1, 1, 200, 4}, uint8(2), uint8(16), uint16(3), uint16(250))
	f.Add(bytes.Repeat([]byte("abc"), 90), []byte{0, 0, 1, 1, 0, 1, 4, 0, 1}, uint8(2), uint8(9), uint16(0), uint16(0))
	f.Add(make([]byte, 100), []byte{0x80, 128, 0, 3, 255, 0x80}, uint8(3), uint8(7), uint16(10), uint16(30))
	f.Add([]byte{1}, []byte{0, 0, 0}, uint8(0), uint8(1), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, data, damage []byte, codeSel, bsSel uint8, offSel, lenSel uint16) {
		cd := allCodes[int(codeSel)%len(allCodes)]
		c, err := New(cd.k, cd.m, 1+int(bsSel)%64)
		if err != nil {
			t.Fatal(err)
		}
		files, err := c.EncodeBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		damaged := map[int]bool{}
		for i := 0; i+2 < len(damage); i += 3 {
			shard := int(damage[i]&0x7f) % c.N()
			f := files[shard]
			if len(f) == 0 {
				continue
			}
			at := int(damage[i+1]) * len(f) / 256
			if damage[i]&0x80 != 0 {
				files[shard] = f[:at]
			} else {
				f[at] ^= damage[i+2] | 1
			}
			damaged[shard] = true
		}
		size := int64(len(data))
		off := int64(offSel) % (size + 1)
		length := int64(lenSel)%(size-off+2) - 1
		end := size
		if length >= 0 {
			end = off + length
		}
		var out bytes.Buffer
		s := &store{files: files}
		_, err = c.Decode(context.Background(), &out, size, off, length, seq(c.N()), s.open)
		want := data[off:end]
		switch {
		case err == nil && !bytes.Equal(out.Bytes(), want):
			t.Fatalf("no error but wrong bytes: got %d bytes, want %d", out.Len(), len(want))
		case err != nil && !bytes.HasPrefix(want, out.Bytes()):
			t.Fatalf("error %v after writing bytes that are not a prefix of the range", err)
		case err != nil && len(damaged) <= cd.m:
			t.Fatalf("%d shards damaged, code %v: %v", len(damaged), cd, err)
		case err != nil && !errors.Is(err, ErrTooFewShards):
			t.Fatalf("error %v does not wrap ErrTooFewShards", err)
		}
	})
}
