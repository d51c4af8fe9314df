package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

var benchSizes = []struct {
	name string
	size int
}{{"4KiB", 4 << 10}, {"1MiB", 1 << 20}, {"64MiB", 64 << 20}}

// BenchmarkPut measures end-to-end PUT through minio-go (streaming SigV4
// over http, its default) into an embedded 6-peer 4+2 server, 8 clients in
// parallel. MB/s is object bytes; ops/s is reported as a metric.
func BenchmarkPut(b *testing.B) {
	c := startServer(b)
	mustMakeBucket(b, c, "bench")
	for _, s := range benchSizes {
		b.Run(s.name, func(b *testing.B) {
			data := payload(1, s.size)
			var seq atomic.Int64
			b.SetBytes(int64(s.size))
			b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 clients
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := fmt.Sprintf("put-%s-%d", s.name, seq.Add(1)%64)
					_, err := c.mc.PutObject(context.Background(), "bench", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkGet measures end-to-end GET of pre-written objects, checking
// every body's length.
func BenchmarkGet(b *testing.B) {
	c := startServer(b)
	mustMakeBucket(b, c, "bench")
	for _, s := range benchSizes {
		b.Run(s.name, func(b *testing.B) {
			data := payload(2, s.size)
			const keys = 16
			for i := 0; i < keys; i++ {
				mustPut(b, c, "bench", fmt.Sprintf("get-%s-%d", s.name, i), data, minio.PutObjectOptions{})
			}
			var seq atomic.Int64
			b.SetBytes(int64(s.size))
			b.SetParallelism(4)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := fmt.Sprintf("get-%s-%d", s.name, seq.Add(1)%keys)
					obj, err := c.mc.GetObject(context.Background(), "bench", key, minio.GetObjectOptions{})
					if err != nil {
						b.Error(err)
						return
					}
					n, err := io.Copy(io.Discard, obj)
					obj.Close()
					if err != nil || n != int64(s.size) {
						b.Errorf("get %s: %d bytes, %v", key, n, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkListDelimiter measures a top-level listing with delimiter "/"
// (one page of 1,000 common prefixes) of a bucket holding 20,000 small
// objects spread over 1,000 prefixes, the scale benchmark's delimiter row.
func BenchmarkListDelimiter(b *testing.B) {
	c := startServer(b)
	mustMakeBucket(b, c, "bench")
	const n, prefixes = 20000, 1000
	fillSmall(b, c, "bench", n, func(i int) string { return fmt.Sprintf("d%03d/f%07d", i%prefixes, i) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.core.ListObjectsV2("bench", "", "", "", "/", 1000)
		if err != nil || len(res.CommonPrefixes) != prefixes {
			b.Fatalf("%d prefixes, %v", len(res.CommonPrefixes), err)
		}
	}
}

// fillSmall writes n objects of 0–255 bytes named by key, 32 at a time.
func fillSmall(b *testing.B, c *cluster, bucket string, n int, key func(int) string) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				data := payload(int64(i), i%256)
				if _, err := c.mc.PutObject(context.Background(), bucket, key(i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
