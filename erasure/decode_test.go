package erasure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	for _, cd := range allCodes {
		for _, bs := range []int{7, 64} {
			for _, size := range []int{0, 1, cd.k - 1, bs - 1, bs, bs + 1, 5*bs + bs/2 + 1} {
				t.Run(fmt.Sprintf("%v/bs=%d/size=%d", cd, bs, size), func(t *testing.T) {
					c := newCoder(t, cd.k, cd.m, bs)
					data := randBytes(rng, size)
					s := &store{files: encodeFiles(t, c, data)}
					got, st, err := decodeAll(c, s, int64(size), 0, -1, seq(c.N()))
					if err != nil || !bytes.Equal(got, data) {
						t.Fatalf("err=%v equal=%v", err, bytes.Equal(got, data))
					}
					if len(st.Bad) != 0 {
						t.Fatalf("bad shards %v on clean files", st.Bad)
					}
					wantUsed := seq(cd.k)
					if size == 0 {
						wantUsed = nil
					}
					if !slices.Equal(st.Used, wantUsed) {
						t.Fatalf("used %v, want %v", st.Used, wantUsed)
					}
				})
			}
		}
	}
}

func TestEveryKSubset(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, cd := range []code{{4, 2}, {6, 3}} {
		c := newCoder(t, cd.k, cd.m, 61)
		data := randBytes(rng, 5*61+17)
		s := &store{files: encodeFiles(t, c, data)}
		for _, sub := range combinations(c.N(), c.K()) {
			rng.Shuffle(len(sub), func(i, j int) { sub[i], sub[j] = sub[j], sub[i] })
			got, st, err := decodeAll(c, s, int64(len(data)), 0, -1, sub)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%v shards %v: err=%v equal=%v", cd, sub, err, bytes.Equal(got, data))
			}
			if !slices.Equal(st.Used, sub) {
				t.Fatalf("%v shards %v: used %v", cd, sub, st.Used)
			}
		}
	}
}

// TestRanges decodes random ranges from random shard orders with up to m
// shards unusable, and checks the bytes and every shard range opened.
func TestRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for iter := range 400 {
		cd := allCodes[rng.Intn(len(allCodes))]
		bs := 1 + rng.Intn(50)
		c := newCoder(t, cd.k, cd.m, bs)
		size := rng.Intn(600)
		data := randBytes(rng, size)
		files, _ := c.EncodeBytes(data)
		s := &store{files: files, openErr: map[int]error{}}
		order := rng.Perm(c.N())
		for _, sh := range order[:rng.Intn(cd.m+1)] {
			if rng.Intn(2) == 0 {
				s.openErr[sh] = errOpen
			} else if len(files[sh]) > 0 {
				files[sh][rng.Intn(len(files[sh]))] ^= 0x40
			}
		}
		off := int64(rng.Intn(size + 1))
		length := int64(rng.Intn(size-int(off)+2)) - 1
		end := int64(size)
		if length >= 0 {
			end = off + length
		}
		got, _, err := decodeAll(c, s, int64(size), off, length, order)
		if err != nil || !bytes.Equal(got, data[off:end]) {
			t.Fatalf("iter %d %v bs=%d size=%d [%d,+%d) order %v: err=%v got %d bytes", iter, cd, bs, size, off, length, order, err, len(got))
		}
		checkOpens(t, c, s.opens(), int64(size), off, length)
	}
}

// checkOpens checks that every shard read covers whole blocks inside the
// range ShardRange gives, starting at it unless it replaced a failed shard.
func checkOpens(t *testing.T, c *Coder, calls []openCall, size, off, length int64) {
	t.Helper()
	sOff, sLen := c.ShardRange(size, off, length)
	for _, oc := range calls {
		if oc.off < sOff || oc.off+oc.n != sOff+sLen || (oc.off-sOff)%int64(crcLen+c.chunk) != 0 {
			t.Fatalf("open %+v outside shard range [%d,+%d) or off a block boundary", oc, sOff, sLen)
		}
	}
	if sLen == 0 && len(calls) > 0 {
		t.Fatalf("empty range opened %v", calls)
	}
}

type damage struct {
	shard int
	block int64
	crc   bool // flip a checksum byte rather than a chunk byte
}

func TestCorruption(t *testing.T) {
	const bs = 48
	tests := []struct {
		name    string
		code    code
		damage  []damage
		wantBad []int
		wantErr bool
	}{
		{"one chunk", code{4, 2}, []damage{{0, 1, false}}, []int{0}, false},
		{"one crc", code{2, 1}, []damage{{1, 5, true}}, []int{1}, false},
		{"m in one block", code{4, 2}, []damage{{0, 2, true}, {3, 2, false}}, []int{0, 3}, false},
		{"m across blocks", code{6, 3}, []damage{{1, 0, false}, {2, 3, true}, {4, 5, false}}, []int{1, 2, 4}, false},
		{"m+1 in different blocks", code{4, 2}, []damage{{0, 1, false}, {1, 2, false}, {2, 3, true}}, []int{0, 1, 2}, false},
		{"parity read after data fails", code{4, 2}, []damage{{1, 1, false}, {4, 1, true}}, []int{1, 4}, false},
		{"m+1 in one block", code{4, 2}, []damage{{0, 2, false}, {1, 2, true}, {4, 2, false}}, []int{0, 1, 4}, true},
		{"m+1 in first block", code{6, 3}, []damage{{0, 0, false}, {1, 0, false}, {6, 0, true}, {8, 0, false}}, nil, true},
		{"m+1 with parity only", code{2, 1}, []damage{{0, 3, false}, {2, 3, false}}, []int{0, 2}, true},
	}
	rng := rand.New(rand.NewSource(13))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCoder(t, tc.code.k, tc.code.m, bs)
			data := randBytes(rng, 6*bs+5)
			files := cloneFiles(encodeFiles(t, c, data))
			firstBad := int64(1 << 40)
			for _, d := range tc.damage {
				at := c.blockOff(d.block) + int64(rng.Intn(crcLen))
				if !d.crc {
					at = c.blockOff(d.block) + crcLen + int64(rng.Intn(c.blockChunk(int64(len(data)), d.block)))
				}
				files[d.shard][at] ^= 1 << rng.Intn(8)
				firstBad = min(firstBad, d.block)
			}
			got, st, err := decodeAll(c, &store{files: files}, int64(len(data)), 0, -1, seq(c.N()))
			if tc.wantErr {
				if !errors.Is(err, ErrTooFewShards) || !errors.Is(err, ErrBitrot) {
					t.Fatalf("err = %v, want ErrTooFewShards and ErrBitrot", err)
				}
				if !bytes.HasPrefix(data, got) || int64(len(got)) > firstBad*bs {
					t.Fatalf("wrote %d bytes (prefix %v); the first damaged block starts at %d",
						len(got), bytes.HasPrefix(data, got), firstBad*bs)
				}
			} else if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("err=%v equal=%v", err, bytes.Equal(got, data))
			}
			if tc.wantBad != nil && !slices.Equal(slices.Sorted(maps.Keys(st.Bad)), tc.wantBad) {
				t.Fatalf("bad = %v, want %v", st.Bad, tc.wantBad)
			}
			for sh, e := range st.Bad {
				if !errors.Is(e, ErrBitrot) {
					t.Fatalf("bad[%d] = %v, want ErrBitrot", sh, e)
				}
			}
		})
	}
}

// TestMisplaced checks that a chunk with a valid checksum for another block
// or another shard is caught.
func TestMisplaced(t *testing.T) {
	c := newCoder(t, 4, 2, 40)
	data := randBytes(rand.New(rand.NewSource(14)), 5*40+3)
	clean := encodeFiles(t, c, data)
	stride := int64(crcLen + c.chunk)
	tests := []struct {
		name  string
		mess  func(f [][]byte)
		shard int
	}{
		{"blocks swapped", func(f [][]byte) {
			a, b := f[2][stride:2*stride], f[2][2*stride:3*stride]
			tmp := bytes.Clone(a)
			copy(a, b)
			copy(b, tmp)
		}, 2},
		{"shard served as another", func(f [][]byte) { f[1] = bytes.Clone(f[0]) }, 1},
		{"truncated", func(f [][]byte) { f[3] = f[3][:len(f[3])-5] }, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := cloneFiles(clean)
			tc.mess(files)
			got, st, err := decodeAll(c, &store{files: files}, int64(len(data)), 0, -1, seq(c.N()))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("err=%v equal=%v", err, bytes.Equal(got, data))
			}
			if _, ok := st.Bad[tc.shard]; !ok || len(st.Bad) != 1 {
				t.Fatalf("bad = %v, want only shard %d", st.Bad, tc.shard)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	c := newCoder(t, 4, 2, 16)
	data := randBytes(rand.New(rand.NewSource(15)), 100)
	files := encodeFiles(t, c, data)
	t.Run("m refused", func(t *testing.T) {
		s := &store{files: files, openErr: map[int]error{0: errOpen, 2: errOpen}}
		got, st, err := decodeAll(c, s, 100, 0, -1, seq(6))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("err=%v equal=%v", err, bytes.Equal(got, data))
		}
		if !errors.Is(st.Bad[0], errOpen) || !errors.Is(st.Bad[2], errOpen) || len(st.Bad) != 2 {
			t.Fatalf("bad = %v", st.Bad)
		}
		if !slices.Equal(slices.Sorted(slices.Values(st.Used)), []int{1, 3, 4, 5}) {
			t.Fatalf("used = %v", st.Used)
		}
	})
	t.Run("m+1 refused", func(t *testing.T) {
		s := &store{files: files, openErr: map[int]error{0: errOpen, 2: errOpen, 5: errOpen}}
		got, _, err := decodeAll(c, s, 100, 0, -1, seq(6))
		if !errors.Is(err, ErrTooFewShards) || !errors.Is(err, errOpen) || len(got) != 0 {
			t.Fatalf("err=%v wrote %d bytes", err, len(got))
		}
	})
	t.Run("short order", func(t *testing.T) {
		s := &store{files: files}
		got, _, err := decodeAll(c, s, 100, 0, -1, []int{5, 1, 2})
		if !errors.Is(err, ErrTooFewShards) || len(got) != 0 || len(s.opens()) != 0 {
			t.Fatalf("err=%v wrote %d bytes, %d opens", err, len(got), len(s.opens()))
		}
	})
}

func TestDecodeArgs(t *testing.T) {
	c := newCoder(t, 2, 1, 8)
	files, _ := c.EncodeBytes(make([]byte, 20))
	s := &store{files: files}
	for _, r := range [][2]int64{{-1, 1}, {21, -1}, {0, 21}, {5, 16}, {3, -2}} {
		if _, _, err := decodeAll(c, s, 20, r[0], r[1], seq(3)); !errors.Is(err, ErrRange) {
			t.Errorf("range %v: err = %v, want ErrRange", r, err)
		}
	}
	for _, order := range [][]int{{0, 0, 1}, {0, 3}, {-1, 0}} {
		if _, _, err := decodeAll(c, s, 20, 0, -1, order); err == nil {
			t.Errorf("order %v accepted", order)
		}
	}
	got, _, err := decodeAll(c, s, 20, 20, -1, seq(3))
	if err != nil || len(got) != 0 || len(s.opens()) != 0 {
		t.Fatalf("empty tail: err=%v got %d bytes, %d opens", err, len(got), len(s.opens()))
	}
}

// blockingReader delivers its bytes, then blocks until closed.
type blockingReader struct {
	r    io.Reader
	done chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if n, err := b.r.Read(p); err != io.EOF {
		return n, err
	}
	<-b.done
	return 0, errors.New("closed")
}

func (b *blockingReader) Close() error { close(b.done); return nil }

// TestDecodeAbortsReaders checks that a failing writer ends Decode even
// while a shard reader is stuck, by closing that reader.
func TestDecodeAbortsReaders(t *testing.T) {
	c := newCoder(t, 2, 1, 8)
	data := randBytes(rand.New(rand.NewSource(16)), 80)
	files, _ := c.EncodeBytes(data)
	stuck := func(ctx context.Context, shard int, off, n int64) (io.ReadCloser, error) {
		f := files[shard][off : off+n]
		if shard == 1 {
			f = f[:2*(crcLen+c.chunk)] // two blocks, then silence
		}
		return &blockingReader{r: bytes.NewReader(f), done: make(chan struct{})}, nil
	}
	w := &failWriter{limit: 12} // fails in block 1, while shard 1 reads block 2
	done := make(chan error, 1)
	go func() {
		_, err := c.Decode(context.Background(), w, 80, 0, -1, seq(3), stuck)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errWrite) {
			t.Fatalf("err = %v, want the write error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Decode did not return")
	}
	if !bytes.Equal(w.buf.Bytes(), data[:12]) {
		t.Fatalf("wrote %x, want %x", w.buf.Bytes(), data[:12])
	}
}

func TestDecodeCancel(t *testing.T) {
	c := newCoder(t, 2, 1, 8)
	data := randBytes(rand.New(rand.NewSource(17)), 8*40)
	files, _ := c.EncodeBytes(data)
	s := &store{files: files}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := c.Decode(ctx, cancelWriter{cancel}, int64(len(data)), 0, -1, seq(3), s.open)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
