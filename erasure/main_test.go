package erasure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type code struct{ k, m int }

func (c code) String() string { return fmt.Sprintf("%d+%d", c.k, c.m) }

var allCodes = []code{{1, 0}, {2, 1}, {4, 2}, {6, 3}, {10, 4}}

func newCoder(t testing.TB, k, m, bs int) *Coder {
	t.Helper()
	c, err := New(k, m, bs)
	if err != nil {
		t.Fatalf("New(%d, %d, %d): %v", k, m, bs, err)
	}
	return c
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// encodeFiles streams data through Encode and checks the result against
// EncodeBytes, so every test starts from shard files both paths agree on.
func encodeFiles(t testing.TB, c *Coder, data []byte) [][]byte {
	t.Helper()
	bufs := make([]bytes.Buffer, c.N())
	w := make([]io.Writer, c.N())
	for i := range w {
		w[i] = &bufs[i]
	}
	n, errs, err := c.Encode(context.Background(), bytes.NewReader(data), w, c.N())
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Encode: n=%d err=%v errs=%v", n, err, errs)
	}
	want, err := c.EncodeBytes(data)
	if err != nil {
		t.Fatalf("EncodeBytes: %v", err)
	}
	files := make([][]byte, c.N())
	for i := range files {
		files[i] = bufs[i].Bytes()
		if !bytes.Equal(files[i], want[i]) {
			t.Fatalf("shard %d: Encode and EncodeBytes differ (%d vs %d bytes)", i, len(files[i]), len(want[i]))
		}
	}
	return files
}

type openCall struct {
	shard  int
	off, n int64
}

// store serves shard files from memory and records every open.
type store struct {
	files   [][]byte
	openErr map[int]error
	// reader, if set, wraps the reader of a shard.
	reader func(shard int, r io.Reader) io.Reader

	mu    sync.Mutex
	calls []openCall
}

var errOpen = errors.New("test: open refused")

func (s *store) open(ctx context.Context, shard int, off, n int64) (io.ReadCloser, error) {
	s.mu.Lock()
	s.calls = append(s.calls, openCall{shard, off, n})
	s.mu.Unlock()
	if err := s.openErr[shard]; err != nil {
		return nil, err
	}
	f := s.files[shard]
	lo := min(off, int64(len(f)))
	hi := min(off+n, int64(len(f)))
	var r io.Reader = bytes.NewReader(f[lo:hi])
	if s.reader != nil {
		r = s.reader(shard, r)
	}
	return io.NopCloser(r), nil
}

func (s *store) opens() []openCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]openCall(nil), s.calls...)
}

func cloneFiles(files [][]byte) [][]byte {
	out := make([][]byte, len(files))
	for i, f := range files {
		out[i] = bytes.Clone(f)
	}
	return out
}

// decodeAll decodes a range into a buffer, returning what was written.
func decodeAll(c *Coder, s *store, size, off, length int64, order []int) ([]byte, DecodeStats, error) {
	var out bytes.Buffer
	st, err := c.Decode(context.Background(), &out, size, off, length, order, s.open)
	return out.Bytes(), st, err
}

// combinations returns every k-subset of 0..n-1 in lexicographic order.
func combinations(n, k int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}
