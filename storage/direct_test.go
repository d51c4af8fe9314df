package storage

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// TestWriteStagedSizes: every size, aligned or not, lands byte-exact,
// whether the reader hands over whole blocks or a byte at a time.
func TestWriteStagedSizes(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, directAlign - 1, directAlign, directAlign + 1, stageBlock - 1, stageBlock, stageBlock + 1, 3*stageBlock + 77} {
		data := make([]byte, size)
		rng := rand.New(rand.NewPCG(uint64(size), 1))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, slow := range []bool{false, true} {
			path := filepath.Join(dir, "f")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			var src io.Reader = bytes.NewReader(data)
			if slow && size < 3*directAlign {
				src = iotest.OneByteReader(src)
			}
			n, err := writeStaged(ctx, f, src)
			f.Close()
			got, rerr := os.ReadFile(path)
			if err != nil || rerr != nil || n != int64(size) || !bytes.Equal(got, data) {
				t.Fatalf("size %d (slow %v): wrote %d, %v, %v; content equal %v", size, slow, n, err, rerr, bytes.Equal(got, data))
			}
		}
	}
}
