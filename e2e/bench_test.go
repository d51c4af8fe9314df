package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
