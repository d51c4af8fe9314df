package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

// BenchmarkOpen measures a restart: Open of a store holding n inlined
// 256-byte objects until its first ReadMeta answers, then Close. The
// store is filled by 32 concurrent writers before timing starts.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{20000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			fill(b, dir, n, func(i int64) string { return fmt.Sprint("key-", i) })
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := Open(dir, DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.ReadMeta(ctx, "bkt", "key-0"); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkListFolded measures a top-level listing with delimiter "/" of
// a store holding n inlined objects spread over 1,000 prefixes, the
// listing each peer answers for a client's ListObjects with a delimiter.
func BenchmarkListFolded(b *testing.B) {
	const n = 20000
	s := openFilled(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		es, err := s.List(ctx, "bkt", "", "", 1001, "/")
		if err != nil || len(es) != 1000 {
			b.Fatalf("%d entries, %v", len(es), err)
		}
	}
}

func fill(b *testing.B, dir string, n int, key func(int64) string) {
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.MakeBucket(ctx, meta.Bucket{Name: "bkt", Created: time.Unix(1, 0).UTC()}); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 256)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				o := inlined("bkt", key(i), meta.Stamp{Nanos: 1, Writer: "w"}, data)
				if err := s.Commit(ctx, o, nil); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkFindTombstones measures what a tombstone collector pass reads
// on one peer holding n live inlined objects and n/100 tombstones: the
// tombstones by age (ListTombstones), against a walk of every key as the
// collector made before (List, 1,000 a page, keeping the tombstones).
func BenchmarkFindTombstones(b *testing.B) {
	const n = 20000
	s := openFilled(b, n)
	for i := 0; i < n; i += 100 {
		o := object("bkt", fmt.Sprintf("d%03d/f%07d", i%1000, i), meta.Stamp{Nanos: 2, Writer: "w"})
		if err := s.Commit(ctx, o, nil); err != nil {
			b.Fatal(err)
		}
	}
	want := n / 100
	b.Run("by-age", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var found int
			for after := (meta.Entry{}); ; {
				es, err := s.ListTombstones(ctx, "bkt", time.Now(), after, 1000)
				if err != nil {
					b.Fatal(err)
				}
				found += len(es)
				if len(es) < 1000 {
					break
				}
				after = es[len(es)-1]
			}
			if found != want {
				b.Fatalf("found %d tombstones, want %d", found, want)
			}
		}
	})
	b.Run("every-key", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var found int
			for after := ""; ; {
				es, err := s.List(ctx, "bkt", "", after, 1000, "")
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range es {
					if e.Deleted {
						found++
					}
				}
				if len(es) < 1000 {
					break
				}
				after = es[len(es)-1].Key
			}
			if found != want {
				b.Fatalf("found %d tombstones, want %d", found, want)
			}
		}
	})
}

// openFilled opens a store filled with n inlined objects spread over
// 1,000 prefixes (dNNN/fNNNNNNN), closed when the benchmark ends.
func openFilled(b *testing.B, n int) *Store {
	dir := b.TempDir()
	fill(b, dir, n, func(i int64) string { return fmt.Sprintf("d%03d/f%07d", i%1000, i) })
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
