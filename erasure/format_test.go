package erasure

import (
	"bytes"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"
)

func TestNewValidates(t *testing.T) {
	tests := []struct {
		k, m, bs int
		ok       bool
	}{
		{1, 0, 1, true},
		{4, 2, 1 << 20, true},
		{128, 128, 4096, true},
		{0, 2, 1024, false},
		{-1, 2, 1024, false},
		{4, -1, 1024, false},
		{200, 57, 1024, false},
		{4, 2, 0, false},
		{4, 2, maxBlockSize + 1, false},
	}
	for _, tc := range tests {
		c, err := New(tc.k, tc.m, tc.bs)
		if (err == nil) != tc.ok {
			t.Errorf("New(%d,%d,%d): err=%v, want ok=%v", tc.k, tc.m, tc.bs, err, tc.ok)
			continue
		}
		if tc.ok && (c.K() != tc.k || c.M() != tc.m || c.N() != tc.k+tc.m || c.BlockSize() != tc.bs) {
			t.Errorf("New(%d,%d,%d): accessors %d %d %d %d", tc.k, tc.m, tc.bs, c.K(), c.M(), c.N(), c.BlockSize())
		}
	}
}

// With k=4 and 10-byte blocks a full block has 3-byte chunks, so 7 bytes
// per block in each shard file.
func TestShardFileSize(t *testing.T) {
	c := newCoder(t, 4, 2, 10)
	tests := []struct{ size, want int64 }{
		{0, 0}, {1, 5}, {4, 5}, {5, 6}, {9, 7}, {10, 7}, {11, 12}, {20, 14}, {25, 20},
	}
	for _, tc := range tests {
		if got := c.ShardFileSize(tc.size); got != tc.want {
			t.Errorf("ShardFileSize(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}

func TestShardRange(t *testing.T) {
	c := newCoder(t, 4, 2, 10)
	tests := []struct {
		size, off, length int64
		wantOff, wantLen  int64
	}{
		{25, 0, -1, 0, 20},
		{25, 0, 1, 0, 7},
		{25, 9, 2, 0, 14},
		{25, 10, 10, 7, 7},
		{25, 20, 5, 14, 6},
		{25, 24, 100, 14, 6},
		{25, 19, 2, 7, 13},
		{25, 25, 1, 0, 0},
		{25, 3, 0, 0, 0},
		{25, -1, 3, 0, 0},
		{0, 0, -1, 0, 0},
	}
	for _, tc := range tests {
		off, n := c.ShardRange(tc.size, tc.off, tc.length)
		if off != tc.wantOff || n != tc.wantLen {
			t.Errorf("ShardRange(%d,%d,%d) = (%d,%d), want (%d,%d)",
				tc.size, tc.off, tc.length, off, n, tc.wantOff, tc.wantLen)
		}
	}
}

// TestLayout checks fill+layout (which reads in place and compacts short
// blocks) against the chunks built directly from the bytes, for every block
// length of many small codes and block sizes.
func TestLayout(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for k := 1; k <= 6; k++ {
		for bs := 1; bs <= 23; bs++ {
			c := newCoder(t, k, 1, bs)
			for l := 1; l <= bs; l++ {
				data := randBytes(rng, l)
				buf := randBytes(rng, c.N()*(crcLen+c.chunk)) // junk, as from the pool
				got, eof, err := c.fill(iotest.OneByteReader(bytes.NewReader(data)), buf)
				if err != nil || got != l || eof != (l < bs) {
					t.Fatalf("k=%d bs=%d l=%d: fill = %d, %v, %v", k, bs, l, got, eof, err)
				}
				cs := c.layout(buf, l)
				if cs != ceilDiv(l, k) {
					t.Fatalf("k=%d bs=%d l=%d: chunk %d", k, bs, l, cs)
				}
				padded := make([]byte, k*cs)
				copy(padded, data)
				for i := range k {
					at := i*(crcLen+cs) + crcLen
					if !bytes.Equal(buf[at:at+cs], padded[i*cs:(i+1)*cs]) {
						t.Fatalf("k=%d bs=%d l=%d: chunk %d = %x, want %x", k, bs, l, i, buf[at:at+cs], padded[i*cs:(i+1)*cs])
					}
				}
			}
		}
	}
}

// TestEncodeStreams checks that Encode over irregular reads gives the same
// shard files as EncodeBytes, of the advertised length.
func TestEncodeStreams(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, cd := range allCodes {
		for _, bs := range []int{7, 64} {
			c := newCoder(t, cd.k, cd.m, bs)
			for _, size := range []int{0, 1, bs - 1, bs, bs + 1, 3*bs + bs/2 + 1} {
				data := randBytes(rng, size)
				want, err := c.EncodeBytes(data)
				if err != nil {
					t.Fatal(err)
				}
				for name, wrap := range map[string]func(io.Reader) io.Reader{
					"onebyte": iotest.OneByteReader,
					"half":    iotest.HalfReader,
					"dataerr": iotest.DataErrReader,
				} {
					got := encodeVia(t, c, wrap(bytes.NewReader(data)))
					for i := range want {
						if int64(len(got[i])) != c.ShardFileSize(int64(size)) || !bytes.Equal(got[i], want[i]) {
							t.Fatalf("%v bs=%d size=%d %s: shard %d differs", cd, bs, size, name, i)
						}
					}
				}
			}
		}
	}
}
