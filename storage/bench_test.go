package storage

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

// BenchmarkCommit measures the write path of one peer: g goroutines each
// rewriting their own keysPerWriter keys, either with an inlined 4 KiB record or with
// one staged 256 KiB shard (StageShard then Commit, a 1 MiB object's shard
// under 4+2). It is bound by fsync latency; ops/s is the figure to compare.
func BenchmarkCommit(b *testing.B) {
	for _, kind := range []struct {
		name   string
		size   int
		staged bool
	}{{"inline-4KiB", 4 << 10, false}, {"staged-256KiB", 256 << 10, true}} {
		for _, g := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("%s/g=%d", kind.name, g), func(b *testing.B) {
				benchCommit(b, kind.size, kind.staged, g)
			})
		}
	}
}

const keysPerWriter = 4

func benchCommit(b *testing.B, size int, staged bool, g int) {
	s, err := Open(b.TempDir(), DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.MakeBucket(ctx, meta.Bucket{Name: "bkt", Created: time.Unix(1, 0).UTC()}); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte{'x'}, size)
	var clock, next atomic.Int64
	one := func(w, i int) error {
		key := fmt.Sprintf("key-%d-%d", w, i%keysPerWriter)
		st := meta.Stamp{Nanos: clock.Add(1), Writer: "w"}
		if !staged {
			return s.Commit(ctx, inlined("bkt", key, st, data), nil)
		}
		id, err := s.StageShard(ctx, bytes.NewReader(data))
		if err != nil {
			return err
		}
		return s.Commit(ctx, object("bkt", key, st, data), []string{id})
	}
	// Every key exists before timing starts: the benchmark is of rewrites,
	// not of the one-off creation of a key's dirs.
	var wg sync.WaitGroup
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < keysPerWriter; i++ {
				if err := one(w, i); err != nil {
					b.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				if err := one(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}
