package server

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"tessera/object"
	"tessera/web"
)

// lister is the part of the object layer the bucket counter reads.
type lister interface {
	ListBuckets(ctx context.Context) ([]object.BucketInfo, error)
	ListObjects(ctx context.Context, bucket string, opts object.ListOptions) (object.ListResult, error)
}

// bucketCounter counts each bucket's objects and bytes in the background by
// listing it, at most countCap objects per bucket, so the status page
// never lists on a request. It rescans when the gateway has served a
// mutation since the last scan (at most every dirtyEvery), and every
// cleanEvery regardless, which catches writes through other gateways.
type bucketCounter struct {
	src        lister
	mutations  func() uint64
	countCap   int
	dirtyEvery time.Duration
	cleanEvery time.Duration
	log        zerolog.Logger

	mu   sync.Mutex
	last web.BucketScan

	cancel context.CancelFunc
	done   chan struct{}
}

const (
	bucketCountCap   = 10000
	bucketDirtyEvery = 10 * time.Second
	bucketCleanEvery = time.Minute
	bucketFirstScan  = 3 * time.Second
)

func startBucketCounter(src lister, mutations func() uint64, log zerolog.Logger) *bucketCounter {
	ctx, cancel := context.WithCancel(context.Background())
	b := &bucketCounter{src: src, mutations: mutations, countCap: bucketCountCap,
		dirtyEvery: bucketDirtyEvery, cleanEvery: bucketCleanEvery, log: log,
		last: web.BucketScan{Buckets: []web.Bucket{}, Cap: bucketCountCap}, cancel: cancel, done: make(chan struct{})}
	go b.run(ctx)
	return b
}

func (b *bucketCounter) run(ctx context.Context) {
	defer close(b.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start := time.Now()
	var lastScan time.Time
	var seen uint64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			m := b.mutations()
			if !b.due(now, start, lastScan, m != seen) {
				continue
			}
			seen, lastScan = m, now
			b.scan(ctx)
		}
	}
}

// due decides whether to scan now: the first time shortly after start,
// then after mutations at most every dirtyEvery, and every cleanEvery.
func (b *bucketCounter) due(now, start, lastScan time.Time, changed bool) bool {
	if lastScan.IsZero() {
		return now.Sub(start) >= bucketFirstScan
	}
	since := now.Sub(lastScan)
	return changed && since >= b.dirtyEvery || since >= b.cleanEvery
}

// scan counts every bucket; a bucket that fails to list keeps its previous
// figures.
func (b *bucketCounter) scan(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	buckets, err := b.src.ListBuckets(ctx)
	if err != nil {
		b.log.Debug().Err(err).Msg("bucket count: list buckets")
		return
	}
	prev := map[string]web.Bucket{}
	for _, x := range b.snapshot().Buckets {
		prev[x.Name] = x
	}
	out := make([]web.Bucket, 0, len(buckets))
	for _, bk := range buckets {
		c, err := b.count(ctx, bk.Name)
		if err != nil {
			b.log.Debug().Err(err).Str("bucket", bk.Name).Msg("bucket count")
			c = prev[bk.Name]
			c.Name = bk.Name
		}
		out = append(out, c)
	}
	b.mu.Lock()
	b.last = web.BucketScan{Buckets: out, Scanned: time.Now().UTC(), Cap: b.countCap}
	b.mu.Unlock()
}

func (b *bucketCounter) count(ctx context.Context, bucket string) (web.Bucket, error) {
	c := web.Bucket{Name: bucket}
	opts := object.ListOptions{MaxKeys: 1000}
	for {
		res, err := b.src.ListObjects(ctx, bucket, opts)
		if err != nil {
			return c, err
		}
		for _, o := range res.Objects {
			c.Objects++
			c.Bytes += o.Size
		}
		if !res.IsTruncated || res.NextAfter == "" {
			return c, nil
		}
		if c.Objects >= int64(b.countCap) {
			c.Capped = true
			return c, nil
		}
		opts.After = res.NextAfter
	}
}

func (b *bucketCounter) snapshot() web.BucketScan {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.last
	s.Buckets = append([]web.Bucket{}, s.Buckets...)
	return s
}

func (b *bucketCounter) close() {
	b.cancel()
	<-b.done
}
