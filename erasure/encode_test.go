package erasure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"slices"
	"testing"
	"testing/iotest"
)

// encodeVia encodes r into memory with every writer required.
func encodeVia(t *testing.T, c *Coder, r io.Reader) [][]byte {
	t.Helper()
	bufs := make([]bytes.Buffer, c.N())
	w := make([]io.Writer, c.N())
	for i := range w {
		w[i] = &bufs[i]
	}
	if _, errs, err := c.Encode(context.Background(), r, w, c.N()); err != nil {
		t.Fatalf("Encode: %v (%v)", err, errs)
	}
	out := make([][]byte, c.N())
	for i := range out {
		out[i] = bufs[i].Bytes()
	}
	return out
}

var errWrite = errors.New("test: write failed")

// failWriter accepts limit bytes, then fails every write.
type failWriter struct {
	buf   bytes.Buffer
	limit int
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		return 0, errWrite
	}
	return w.buf.Write(p)
}

func TestEncodeWriterFailures(t *testing.T) {
	const bs = 40
	rng := rand.New(rand.NewSource(3))
	data := randBytes(rng, 9*bs+13)
	tests := []struct {
		name    string
		code    code
		quorum  int
		fail    map[int]int // shard -> bytes accepted before failing
		nilW    []int
		wantErr error
	}{
		{"none", code{4, 2}, 4, nil, nil, nil},
		{"one data mid-stream", code{4, 2}, 4, map[int]int{1: 30}, nil, nil},
		{"m writers", code{4, 2}, 4, map[int]int{0: 0, 5: 45}, nil, nil},
		{"nil and failing", code{6, 3}, 6, map[int]int{2: 100}, []int{4, 8}, nil},
		{"quorum raised to k", code{4, 2}, 0, map[int]int{1: 11, 2: 22}, nil, nil},
		{"m+1 writers", code{4, 2}, 4, map[int]int{0: 11, 3: 60, 4: 0}, nil, ErrTooFewShards},
		{"above quorum", code{4, 2}, 5, map[int]int{0: 11, 3: 60}, nil, ErrTooFewShards},
		{"too many nil", code{2, 1}, 2, nil, []int{0, 1}, ErrTooFewShards},
		{"fails on last block", code{2, 1}, 3, map[int]int{1: 9*24 + 5}, nil, ErrTooFewShards},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCoder(t, tc.code.k, tc.code.m, bs)
			fws := make([]*failWriter, c.N())
			w := make([]io.Writer, c.N())
			for i := range w {
				fws[i] = &failWriter{limit: 1 << 30}
				if lim, ok := tc.fail[i]; ok {
					fws[i].limit = lim
				}
				w[i] = fws[i]
			}
			for _, i := range tc.nilW {
				w[i] = nil
			}
			n, errs, err := c.Encode(context.Background(), iotest.HalfReader(bytes.NewReader(data)), w, tc.quorum)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if n != int64(len(data)) {
				t.Fatalf("n = %d, want %d", n, len(data))
			}
			want, _ := c.EncodeBytes(data)
			var good []int
			for i := range w {
				_, failed := tc.fail[i]
				failed = failed || slices.Contains(tc.nilW, i)
				if failed != (errs[i] != nil) {
					t.Fatalf("shard %d: errs = %v, failed = %v", i, errs[i], failed)
				}
				if _, ok := tc.fail[i]; ok && !errors.Is(errs[i], errWrite) {
					t.Fatalf("shard %d: errs = %v, want it to wrap the write error", i, errs[i])
				}
				if !failed {
					good = append(good, i)
					if !bytes.Equal(fws[i].buf.Bytes(), want[i]) {
						t.Fatalf("shard %d differs from EncodeBytes", i)
					}
				}
			}
			s := &store{files: make([][]byte, c.N())}
			for i := range s.files {
				s.files[i] = fws[i].buf.Bytes()
			}
			got, _, err := decodeAll(c, s, int64(len(data)), 0, -1, good)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("decode from surviving shards %v: err=%v equal=%v", good, err, bytes.Equal(got, data))
			}
		})
	}
}

func TestEncodeReadError(t *testing.T) {
	errRead := errors.New("test: read failed")
	c := newCoder(t, 4, 2, 32)
	data := randBytes(rand.New(rand.NewSource(4)), 100)
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errRead))
	w := make([]io.Writer, c.N())
	for i := range w {
		w[i] = io.Discard
	}
	n, _, err := c.Encode(context.Background(), r, w, 4)
	if !errors.Is(err, errRead) {
		t.Fatalf("err = %v, want %v", err, errRead)
	}
	if n != int64(len(data)) {
		t.Fatalf("n = %d, want %d", n, len(data))
	}
}

// cancelWriter cancels a context on its first write.
type cancelWriter struct{ cancel context.CancelFunc }

func (w cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return len(p), nil
}

func TestEncodeCancel(t *testing.T) {
	c := newCoder(t, 2, 1, 8)
	data := randBytes(rand.New(rand.NewSource(5)), 8*50)
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n, _, err := c.Encode(ctx, bytes.NewReader(data), []io.Writer{io.Discard, io.Discard, io.Discard}, 2)
		if !errors.Is(err, context.Canceled) || n != 0 {
			t.Fatalf("n=%d err=%v, want 0 and context.Canceled", n, err)
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := []io.Writer{io.Discard, cancelWriter{cancel}, io.Discard}
		n, _, err := c.Encode(ctx, bytes.NewReader(data), w, 2)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n >= int64(len(data)) {
			t.Fatalf("read all %d bytes despite the cancel", n)
		}
	})
}

func TestEncodeArgs(t *testing.T) {
	c := newCoder(t, 2, 1, 8)
	ctx := context.Background()
	if _, _, err := c.Encode(ctx, bytes.NewReader(nil), make([]io.Writer, 2), 2); err == nil {
		t.Error("Encode accepted 2 writers for 3 shards")
	}
	w := []io.Writer{io.Discard, io.Discard, io.Discard}
	if _, _, err := c.Encode(ctx, bytes.NewReader(nil), w, 4); err == nil {
		t.Error("Encode accepted quorum 4 of 3 shards")
	}
	var bufs [3]bytes.Buffer
	n, errs, err := c.Encode(ctx, bytes.NewReader(nil), []io.Writer{&bufs[0], &bufs[1], &bufs[2]}, 3)
	if err != nil || n != 0 || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("empty object: n=%d errs=%v err=%v", n, errs, err)
	}
	for i := range bufs {
		if bufs[i].Len() != 0 {
			t.Fatalf("empty object: shard %d has %d bytes", i, bufs[i].Len())
		}
	}
}
