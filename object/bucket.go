package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"tessera/meta"
)

// Buckets live on every peer of the ring. Creating one needs a majority of
// peers; reads need a majority to answer and go with what most answering
// peers hold (a tie counts as present, so a bucket is never hidden by
// peers that missed its creation).

// MakeBucket creates bucket on every peer. ErrBucketExists when a majority
// already holds it.
func (l *Layer) MakeBucket(ctx context.Context, bucket string) error {
	peers := l.cfg.Cluster.Peers()
	b := meta.Bucket{Name: bucket, Created: l.cfg.Now().UTC()}
	rs := fanout(ctx, l, peers, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) (struct{}, error) {
		return struct{}{}, c.MakeBucket(ctx, b)
	})
	t := tallyOf(rs)
	need := majority(len(peers))
	exists := t.count(meta.ErrBucketExists)
	switch {
	case exists >= need:
		return fmt.Errorf("make bucket %s: %w", bucket, ErrBucketExists)
	case t.ok > 0 && t.ok+exists >= need:
		l.buckets.remember(bucket)
		return nil
	}
	return fmt.Errorf("make bucket %s: %w", bucket, t.failure("make bucket", need))
}

// HeadBucket reports whether bucket exists, by majority of answering peers.
func (l *Layer) HeadBucket(ctx context.Context, bucket string) (BucketInfo, error) {
	b, ok, err := l.statBucket(ctx, bucket)
	if err != nil {
		return BucketInfo{}, fmt.Errorf("head bucket %s: %w", bucket, err)
	}
	if !ok {
		return BucketInfo{}, fmt.Errorf("head bucket %s: %w", bucket, ErrBucketNotFound)
	}
	return BucketInfo{Name: b.Name, Created: b.Created}, nil
}

// ListBuckets lists the buckets most answering peers hold, by name.
func (l *Layer) ListBuckets(ctx context.Context) ([]BucketInfo, error) {
	peers := l.cfg.Cluster.Peers()
	rs := fanout(ctx, l, peers, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) ([]meta.Bucket, error) {
		return c.ListBuckets(ctx)
	})
	t := tallyOf(rs)
	if need := majority(len(peers)); t.ok < need {
		return nil, fmt.Errorf("list buckets: %w", t.failure("list buckets", need))
	}
	count := map[string]int{}
	created := map[string]time.Time{}
	for _, r := range rs {
		if r.err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, b := range r.val {
			if seen[b.Name] {
				continue
			}
			seen[b.Name] = true
			count[b.Name]++
			if c, ok := created[b.Name]; !ok || b.Created.Before(c) {
				created[b.Name] = b.Created
			}
		}
	}
	out := make([]BucketInfo, 0, len(count))
	for name, n := range count {
		if 2*n >= t.ok {
			out = append(out, BucketInfo{Name: name, Created: created[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// statBucket asks the peers for the bucket record and decides by
// majority of the answers; a peer stalled or dead is asked only when the
// others do not make a majority.
func (l *Layer) statBucket(ctx context.Context, bucket string) (meta.Bucket, bool, error) {
	peers := l.cfg.Cluster.Peers()
	rs := fanoutQuorum(ctx, l, peers, l.cfg.PeerTimeout, majority(len(peers)), func(ctx context.Context, _ int, c ShardClient) (meta.Bucket, error) {
		return c.StatBucket(ctx, bucket)
	})
	t := tallyOf(rs)
	absent := t.count(meta.ErrBucketNotFound)
	if need := majority(len(peers)); t.ok+absent < need {
		return meta.Bucket{}, false, t.failure("stat bucket", need)
	}
	if t.ok == 0 || t.ok < absent {
		return meta.Bucket{}, false, nil
	}
	var b meta.Bucket
	for _, r := range rs {
		if r.err == nil && (b.Name == "" || r.val.Created.Before(b.Created)) {
			b = r.val
		}
	}
	b.Name = bucket
	l.buckets.remember(bucket)
	return b, true, nil
}

// requireBucket fails with ErrBucketNotFound unless bucket exists, trusting
// a recent positive answer so a busy bucket costs no extra round trip.
func (l *Layer) requireBucket(ctx context.Context, bucket string) error {
	if l.buckets.fresh(bucket) {
		return nil
	}
	_, ok, err := l.statBucket(ctx, bucket)
	if err != nil {
		return err
	}
	if !ok {
		return ErrBucketNotFound
	}
	return nil
}

// bucketMissing reports whether a not-found answer is really a missing
// bucket. It is consulted only on not-found paths, so it never caches.
func (l *Layer) bucketMissing(ctx context.Context, bucket string) bool {
	l.buckets.forget(bucket)
	err := l.requireBucket(ctx, bucket)
	return errors.Is(err, ErrBucketNotFound)
}

// bucketCache remembers buckets recently confirmed to exist. Only positive
// answers are cached: a bucket created through another gateway must be
// usable at once, while a deleted one lingering for a TTL only lets a
// write reach the peers, which refuse it.
type bucketCache struct {
	mu  sync.Mutex
	ttl time.Duration
	at  map[string]time.Time
}

func (c *bucketCache) fresh(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[name]
	return ok && time.Since(t) < c.ttl
}

func (c *bucketCache) remember(name string) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string]time.Time{}
	}
	c.at[name] = time.Now()
}

func (c *bucketCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.at, name)
}
