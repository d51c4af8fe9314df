package object

import (
	"context"
	"sync"
	"time"

	"tessera/meta"
)

// The tombstone collector removes old tombstones from every peer
// (CollectTombstone), in passes of its own beside the repair scanner.
// Why not in the scanner's pass: the scanner checks every key at
// ScanRate (50 a second by default, so that repairs stay in the
// background), and a pass over a million keys takes hours; after a mass
// delete (a backup's prune, a log bucket's expiry) the tombstones would
// wait that long past their grace period, each one a record every
// listing of the bucket must skip. Nor does the collector walk the
// bucket's keys: each peer indexes its tombstones by age, so a pass reads
// only the tombstones past the grace period, however many live keys the
// bucket holds (a walk of a hundred million keys takes about an hour),
// and collects them at CollectRate. A tombstone it cannot collect yet (a
// copy missing or unreadable) is left to the scanner, whose repair
// completes it, and to the next pass.

// collectPause is the wait between two collector passes: a quarter of the
// grace period, so a tombstone is collected at most a quarter late, within
// a second and an hour.
func (q *RepairQueue) collectPause() time.Duration {
	return min(max(q.cfg.TombstoneGrace/4, time.Second), time.Hour)
}

// collect runs collector passes until ctx ends.
func (q *RepairQueue) collect(ctx context.Context, l *Layer) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / q.cfg.CollectRate))
	defer tick.Stop()
	if !sleepCtx(ctx, min(q.collectPause(), firstPassDelay)) {
		return
	}
	for {
		n, err := q.collectPass(ctx, l, tick.C)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			q.log.Warn().Err(err).Msg("tombstone collection pass cut short")
		case n > 0:
			q.log.Info().Uint64("collected", n).Msg("tombstones removed from every peer")
		}
		if !sleepCtx(ctx, q.collectPause()) {
			return
		}
	}
}

// collectPass asks every peer on the ring for each bucket's tombstones
// older than the grace period (ListTombstones, which reads only
// tombstones) and collects each one, one per tick, up to Workers at once.
// It returns how many it removed. A peer that does not answer is passed
// over: the other copies of its tombstones are listed by their peers, and
// CollectTombstone needs every copy to answer anyway.
func (q *RepairQueue) collectPass(ctx context.Context, l *Layer, tick <-chan time.Time) (uint64, error) {
	buckets, err := l.ListBuckets(ctx)
	if err != nil {
		return 0, err
	}
	c := &collection{q: q, l: l, tick: tick, slots: make(chan struct{}, q.cfg.Workers), tried: map[string]bool{}}
	for _, b := range buckets {
		for _, p := range l.cfg.Cluster.Peers() {
			err := c.fromPeer(ctx, b.Name, p)
			c.wg.Wait() // a key in flight is not handed out again by the next peer
			switch {
			case ctx.Err() != nil:
				return c.collected, ctx.Err()
			case err != nil:
				q.log.Debug().Err(err).Str("bucket", b.Name).Str("peer", string(p)).Msg("tombstones not listed")
			}
		}
		clear(c.tried)
	}
	return c.collected, nil
}

// collection is one collector pass.
type collection struct {
	q     *RepairQueue
	l     *Layer
	tick  <-chan time.Time
	slots chan struct{}
	wg    sync.WaitGroup

	mu        sync.Mutex
	collected uint64
	// tried holds the keys of the bucket this pass failed to collect,
	// so that the peers holding their other copies do not each try again.
	tried map[string]bool
}

// maxTried bounds collection.tried; past it a key may be tried once per
// peer holding it, which costs time, not correctness.
const maxTried = 100000

// fromPeer collects the old tombstones one peer lists in bucket.
func (c *collection) fromPeer(ctx context.Context, bucket string, p meta.PeerID) error {
	cutoff := time.Now().Add(-c.q.cfg.TombstoneGrace)
	var after meta.Entry
	for {
		page, err := call(quiet(ctx), c.l, p, c.l.cfg.PeerTimeout, func(ctx context.Context, sc ShardClient) ([]meta.Entry, error) {
			return sc.ListTombstones(ctx, bucket, cutoff, after, DefaultMaxKeys)
		})
		if err != nil {
			return err
		}
		for _, e := range page {
			if c.skip(bucket, e.Key) {
				continue
			}
			if err := waitTurn(ctx, c.tick, c.slots); err != nil {
				return err
			}
			c.wg.Go(func() {
				defer func() { <-c.slots }()
				done := c.q.collectOne(ctx, c.l, bucket, e.Key, cutoff)
				c.mu.Lock()
				defer c.mu.Unlock()
				if done {
					c.collected++
				} else if len(c.tried) < maxTried {
					c.tried[e.Key] = true
				}
			})
		}
		if len(page) < DefaultMaxKeys {
			return nil
		}
		after = page[len(page)-1]
	}
}

// skip reports a key this pass already failed on, or that the repair
// queue holds (a repair of it is pending).
func (c *collection) skip(bucket, key string) bool {
	c.mu.Lock()
	tried := c.tried[key]
	c.mu.Unlock()
	return tried || c.q.queued(bucket, key)
}

// waitTurn waits for the next tick, then for a free slot.
func waitTurn(ctx context.Context, tick <-chan time.Time, slots chan<- struct{}) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tick:
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case slots <- struct{}{}:
		return nil
	}
}

// collectOne collects one tombstone, reporting whether it is gone.
func (q *RepairQueue) collectOne(ctx context.Context, l *Layer, bucket, key string, cutoff time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	done, err := l.CollectTombstone(ctx, bucket, key, cutoff)
	if err != nil {
		q.log.Debug().Str("bucket", bucket).Str("key", key).Err(err).Msg("tombstone not collected")
	}
	if done {
		q.mu.Lock()
		q.stats.Collected++
		q.mu.Unlock()
	}
	return done
}
