package object

import (
	"context"
	"errors"
	"fmt"

	"tessera/meta"
)

// ErrNoBucketConfig reports that a bucket has no configuration of the
// asked name (never set, or deleted).
var ErrNoBucketConfig = errors.New("bucket configuration not found")

// bucketConfigClient is the optional ShardClient part that stores bucket
// configuration records; *peer.Client implements it.
type bucketConfigClient interface {
	PutBucketConfig(ctx context.Context, c meta.BucketConfig) error
	GetBucketConfig(ctx context.Context, bucket, name string) (meta.BucketConfig, error)
}

var errNoConfigSupport = errors.New("peer client cannot store bucket configuration")

// PutBucketConfig stores data as the bucket's configuration name on every
// peer; empty data deletes it. Records carry the writer's clock, and
// peers and readers keep the newest, so the last writer wins. A majority
// acknowledges it and GetBucketConfig reads a majority, so every reader
// sees an acknowledged setting without waiting on a hung peer.
func (l *Layer) PutBucketConfig(ctx context.Context, bucket, name string, data []byte) error {
	if err := l.requireBucket(ctx, bucket); err != nil {
		return fmt.Errorf("put bucket config %s: %w", bucket, err)
	}
	bc := meta.BucketConfig{Bucket: bucket, Name: name, Updated: l.cfg.Now().UTC(), Data: data}
	peers := l.cfg.Cluster.Peers()
	need := majority(len(peers))
	rs := fanoutQuorum(ctx, l, peers, l.cfg.PeerTimeout, need, func(ctx context.Context, _ int, c ShardClient) (struct{}, error) {
		cc, ok := c.(bucketConfigClient)
		if !ok {
			return struct{}{}, errNoConfigSupport
		}
		return struct{}{}, cc.PutBucketConfig(ctx, bc)
	})
	t := tallyOf(rs)
	if t.count(meta.ErrBucketNotFound) >= need {
		return fmt.Errorf("put bucket config %s: %w", bucket, ErrBucketNotFound)
	}
	if t.ok < need {
		return fmt.Errorf("put bucket config %s: %w", bucket, t.failure("put bucket config", need))
	}
	return nil
}

// GetBucketConfig returns the newest configuration name the answering
// peers hold: ErrNoBucketConfig when there is none, ErrBucketNotFound when
// most peers lack the bucket.
func (l *Layer) GetBucketConfig(ctx context.Context, bucket, name string) ([]byte, error) {
	peers := l.cfg.Cluster.Peers()
	need := majority(len(peers))
	rs := fanoutQuorum(ctx, l, peers, l.cfg.PeerTimeout, need, func(ctx context.Context, _ int, c ShardClient) (meta.BucketConfig, error) {
		cc, ok := c.(bucketConfigClient)
		if !ok {
			return meta.BucketConfig{}, errNoConfigSupport
		}
		return cc.GetBucketConfig(ctx, bucket, name)
	})
	t := tallyOf(rs)
	absent, none := t.count(meta.ErrBucketNotFound), t.count(meta.ErrNotFound)
	if t.ok+absent+none < need {
		return nil, fmt.Errorf("get bucket config %s: %w", bucket, t.failure("get bucket config", need))
	}
	if absent > t.ok+none {
		return nil, fmt.Errorf("get bucket config %s: %w", bucket, ErrBucketNotFound)
	}
	var best meta.BucketConfig
	found := false
	for _, r := range rs {
		if r.err == nil && (!found || r.val.Updated.After(best.Updated)) {
			best, found = r.val, true
		}
	}
	if !found || len(best.Data) == 0 {
		return nil, fmt.Errorf("get bucket config %s/%s: %w", bucket, name, ErrNoBucketConfig)
	}
	return best.Data, nil
}
