package erasure

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
)

func TestDecodeVerified(t *testing.T) {
	c := newCoder(t, 4, 2, 24)
	const size = 5*24 + 7
	data := randBytes(rand.New(rand.NewSource(31)), size)
	files := encodeFiles(t, c, data)
	tests := []struct {
		name        string
		off, length int64
		missing     []int // shards left out
		wantErr     error
	}{
		{"whole, data shards", 0, size, []int{4, 5}, nil},
		{"whole, every shard", 0, size, nil, nil},
		{"rebuilt data shards", 0, size, []int{0, 2}, nil},
		{"middle range", 30, 50, []int{1, 5}, nil},
		{"last bytes", size - 3, 3, []int{3}, nil},
		{"to the end", 40, -1, []int{0}, nil},
		{"empty", 10, 0, nil, nil},
		{"too few", 0, size, []int{0, 1, 4}, ErrTooFewShards},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			so, sl := c.ShardRange(size, tc.off, tc.length)
			ranges := make([][]byte, c.N())
			for i, f := range files {
				ranges[i] = f[so : so+sl]
			}
			for _, i := range tc.missing {
				ranges[i] = nil
			}
			var out bytes.Buffer
			err := c.DecodeVerified(&out, size, tc.off, tc.length, ranges)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			end := tc.off + tc.length
			if tc.length < 0 {
				end = size
			}
			if err == nil && !bytes.Equal(out.Bytes(), data[tc.off:end]) {
				t.Fatalf("decoded %d bytes differ from the %d written", out.Len(), end-tc.off)
			}
		})
	}
	short := make([][]byte, c.N())
	for i, f := range files {
		short[i] = f[:len(f)-1]
	}
	if err := c.DecodeVerified(&bytes.Buffer{}, size, 0, size, short); !errors.Is(err, ErrRange) {
		t.Fatalf("ranges one byte short: err = %v, want ErrRange", err)
	}
}
