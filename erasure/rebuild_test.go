package erasure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
)

// TestRebuild regenerates every set of up to m shards, from shard files
// where those shards are garbage, and expects the original files back.
func TestRebuild(t *testing.T) {
	rng := rand.New(rand.NewSource(20))
	for _, cd := range []code{{2, 1}, {4, 2}, {6, 3}} {
		c := newCoder(t, cd.k, cd.m, 29)
		data := randBytes(rng, 4*29+11)
		clean := encodeFiles(t, c, data)
		for lost := 1; lost <= cd.m; lost++ {
			for _, targets := range combinations(c.N(), lost) {
				files := cloneFiles(clean)
				bufs := make(map[int]*bytes.Buffer)
				w := make(map[int]io.Writer)
				for _, sh := range targets {
					rng.Read(files[sh]) // never to be read
					bufs[sh] = new(bytes.Buffer)
					w[sh] = bufs[sh]
				}
				s := &store{files: files}
				st, err := c.Rebuild(context.Background(), int64(len(data)), rng.Perm(c.N()), s.open, w)
				if err != nil {
					t.Fatalf("%v targets %v: %v", cd, targets, err)
				}
				for _, sh := range targets {
					if !bytes.Equal(bufs[sh].Bytes(), clean[sh]) {
						t.Fatalf("%v targets %v: shard %d not restored", cd, targets, sh)
					}
				}
				if len(st.Bad) != 0 {
					t.Fatalf("%v targets %v: bad %v", cd, targets, st.Bad)
				}
				for _, oc := range s.opens() {
					if _, ok := w[oc.shard]; ok {
						t.Fatalf("%v targets %v: read target shard %d", cd, targets, oc.shard)
					}
				}
			}
		}
	}
}

// TestRebuildFrom moves shards: every target is still readable where it
// was, and up to n-k of them at once (more than m) come out whole, read
// and verified rather than reconstructed, mixed with reconstructed ones
// when a target's old copy is gone.
func TestRebuildFrom(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	c := newCoder(t, 4, 2, 29)
	data := randBytes(rng, 5*29+3)
	clean := encodeFiles(t, c, data)
	for _, tc := range []struct {
		targets []int
		gone    []int // targets whose old copy is missing
	}{{[]int{0, 1, 2}, nil}, {[]int{0, 1, 2, 3, 4, 5}, nil}, {[]int{1, 2, 5}, []int{5}}, {[]int{0, 4}, []int{0, 4}}} {
		files := cloneFiles(clean)
		for _, sh := range tc.gone {
			files[sh] = nil
		}
		bufs := make(map[int]*bytes.Buffer)
		w := make(map[int]io.Writer)
		for _, sh := range tc.targets {
			bufs[sh] = new(bytes.Buffer)
			w[sh] = bufs[sh]
		}
		s := &store{files: files}
		if _, err := c.RebuildFrom(context.Background(), int64(len(data)), rng.Perm(c.N()), s.open, w); err != nil {
			t.Fatalf("targets %v, gone %v: %v", tc.targets, tc.gone, err)
		}
		for _, sh := range tc.targets {
			if !bytes.Equal(bufs[sh].Bytes(), clean[sh]) {
				t.Fatalf("targets %v, gone %v: shard %d not whole", tc.targets, tc.gone, sh)
			}
		}
	}
}

func TestRebuildFallbackAndErrors(t *testing.T) {
	c := newCoder(t, 4, 2, 32)
	data := randBytes(rand.New(rand.NewSource(21)), 200)
	clean := encodeFiles(t, c, data)
	ctx := context.Background()

	t.Run("corrupt source", func(t *testing.T) {
		files := cloneFiles(clean)
		files[1][c.blockOff(3)+crcLen+2] ^= 0x10
		var out bytes.Buffer
		st, err := c.Rebuild(ctx, 200, seq(6), (&store{files: files}).open, map[int]io.Writer{5: &out})
		if err != nil || !bytes.Equal(out.Bytes(), clean[5]) {
			t.Fatalf("err=%v restored=%v", err, bytes.Equal(out.Bytes(), clean[5]))
		}
		if !errors.Is(st.Bad[1], ErrBitrot) {
			t.Fatalf("bad = %v, want shard 1 bitrot", st.Bad)
		}
	})
	t.Run("too few sources", func(t *testing.T) {
		s := &store{files: clean, openErr: map[int]error{0: errOpen}}
		var a, b bytes.Buffer
		_, err := c.Rebuild(ctx, 200, seq(6), s.open, map[int]io.Writer{2: &a, 4: &b})
		if !errors.Is(err, ErrTooFewShards) || a.Len()+b.Len() != 0 {
			t.Fatalf("err=%v wrote %d+%d bytes", err, a.Len(), b.Len())
		}
	})
	t.Run("write error", func(t *testing.T) {
		w := &failWriter{limit: 20}
		_, err := c.Rebuild(ctx, 200, seq(6), (&store{files: clean}).open, map[int]io.Writer{0: w})
		if !errors.Is(err, errWrite) {
			t.Fatalf("err = %v, want the write error", err)
		}
	})
	t.Run("bad target", func(t *testing.T) {
		for _, tg := range []map[int]io.Writer{{6: io.Discard}, {1: nil}} {
			if _, err := c.Rebuild(ctx, 200, seq(6), (&store{files: clean}).open, tg); err == nil {
				t.Errorf("targets %v accepted", tg)
			}
		}
	})
	t.Run("empty object", func(t *testing.T) {
		s := &store{}
		var out bytes.Buffer
		if _, err := c.Rebuild(ctx, 0, seq(6), s.open, map[int]io.Writer{0: &out}); err != nil || out.Len() != 0 || len(s.opens()) != 0 {
			t.Fatalf("err=%v wrote %d bytes, %d opens", err, out.Len(), len(s.opens()))
		}
	})
}

func TestVerifyShard(t *testing.T) {
	c := newCoder(t, 4, 2, 24)
	const size = 3*24 + 7
	files := encodeFiles(t, c, randBytes(rand.New(rand.NewSource(22)), size))
	stride := crcLen + c.chunk
	flip := func(at int) func([]byte) []byte {
		return func(f []byte) []byte { f[at] ^= 0x01; return f }
	}
	tests := []struct {
		name    string
		shard   int // shard whose file is checked; it is verified as shard 3
		size    int64
		mess    func([]byte) []byte
		wantErr error
	}{
		{"good", 3, size, func(f []byte) []byte { return f }, nil},
		{"chunk byte", 3, size, flip(stride + crcLen + 1), ErrBitrot},
		{"crc byte", 3, size, flip(2*stride + 2), ErrBitrot},
		{"last block", 3, size, flip(3*stride + crcLen), ErrBitrot},
		{"truncated", 3, size, func(f []byte) []byte { return f[:len(f)-1] }, io.ErrUnexpectedEOF},
		{"trailing", 3, size, func(f []byte) []byte { return append(f, 0) }, ErrBitrot},
		{"other shard", 2, size, func(f []byte) []byte { return f }, ErrBitrot},
		{"blocks swapped", 3, size, func(f []byte) []byte {
			g := bytes.Clone(f)
			copy(g[:stride], f[stride:2*stride])
			copy(g[stride:2*stride], f[:stride])
			return g
		}, ErrBitrot},
		{"empty object", 3, 0, func([]byte) []byte { return nil }, nil},
		{"empty object with bytes", 3, 0, func([]byte) []byte { return []byte{1} }, ErrBitrot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.mess(bytes.Clone(files[tc.shard]))
			err := c.VerifyShard(bytes.NewReader(f), tc.size, 3)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
	if err := c.VerifyShard(bytes.NewReader(files[0]), size, 6); err == nil {
		t.Fatal("shard 6 of 6 accepted")
	}
}

func TestVerifyRange(t *testing.T) {
	c := newCoder(t, 4, 2, 24)
	const size = 3*24 + 7
	files := encodeFiles(t, c, randBytes(rand.New(rand.NewSource(23)), size))
	stride := int64(crcLen + c.chunk)
	f := files[3]
	flipped := bytes.Clone(f)
	flipped[2*stride+crcLen] ^= 0x01
	tests := []struct {
		name    string
		shard   int
		off     int64
		data    []byte
		wantErr error
	}{
		{"whole file", 3, 0, f, nil},
		{"middle blocks", 3, stride, f[stride : 3*stride], nil},
		{"last block", 3, 3 * stride, f[3*stride:], nil},
		{"empty", 3, stride, nil, nil},
		{"damaged block", 3, stride, flipped[stride : 3*stride], ErrBitrot},
		{"other shard", 2, 0, f[:stride], ErrBitrot},
		{"not at a boundary", 3, 1, f[1 : stride+1], ErrRange},
		{"partial block", 3, 0, f[:stride-1], ErrRange},
		{"past the end", 3, 3 * stride, append(bytes.Clone(f[3*stride:]), 0), ErrRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.VerifyRange(size, tc.off, tc.shard, tc.data)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
