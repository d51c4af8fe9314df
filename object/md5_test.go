package object

import (
	"bytes"
	"crypto/md5"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestETagHashMatchesMD5: bodies below and above the SIMD threshold, and
// of unknown size, hashed by concurrent streams in writes of odd sizes,
// give crypto/md5's digest.
func TestETagHashMatchesMD5(t *testing.T) {
	sizes := []int64{0, 1, 4 << 10, simdMD5Min - 1, simdMD5Min, 3*simdMD5Min + 333}
	var wg sync.WaitGroup
	for i, size := range sizes {
		for _, declared := range []int64{size, -1} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(i), uint64(size)))
				data := make([]byte, size)
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				h := newETagHash(declared)
				defer h.release()
				for rest := data; len(rest) > 0; {
					n := min(len(rest), 1+r.IntN(100_000))
					h.Write(rest[:n])
					rest = rest[n:]
				}
				want := md5.Sum(data)
				// The ETag and a Content-MD5 check each take the sum.
				for range 2 {
					if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
						t.Errorf("size %d (declared %d): md5 %x, want %x", size, declared, got, want)
					}
				}
			}()
		}
	}
	wg.Wait()
}
