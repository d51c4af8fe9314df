package object

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
)

// Concurrent writers of one key and readers of it: every read returns one
// whole version, never a mix, and the layer is race-free.
func TestConcurrentWritersAndReaders(t *testing.T) {
	l, _ := newTestLayer(t)
	versions := make([][]byte, 6)
	for i := range versions {
		size := []int{300, 2*testBlock + 1}[i%2]
		versions[i] = randBytes(uint64(100+i), size)
	}
	put(t, l, "k", versions[0])
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				d := versions[w]
				if _, err := l.PutObject(context.Background(), testBucket, "k", bytes.NewReader(d), int64(len(d)), PutOptions{}); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				got, err := get(l, "k")
				if err != nil {
					// An overwrite may remove the shards of the version a
					// read resolved; the read then fails rather than mixing.
					checkPrefixOfAny(errs, r, got, versions)
					continue
				}
				if !isOneOf(got, versions) {
					errs <- fmt.Errorf("reader %d: %d bytes match no version", r, len(got))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func isOneOf(got []byte, versions [][]byte) bool {
	for _, v := range versions {
		if bytes.Equal(got, v) {
			return true
		}
	}
	return false
}

func checkPrefixOfAny(errs chan<- error, r int, got []byte, versions [][]byte) {
	for _, v := range versions {
		if len(got) <= len(v) && bytes.Equal(got, v[:len(got)]) {
			return
		}
	}
	errs <- fmt.Errorf("reader %d: failed read wrote bytes of no version", r)
}

func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			l, _ := newTestLayer(b)
			data := randBytes(1, size)
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				put(b, l, fmt.Sprint(i%64), data)
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			l, _ := newTestLayer(b)
			data := randBytes(1, size)
			put(b, l, "k", data)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := get(l, "k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
