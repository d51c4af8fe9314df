package object

import (
	"context"
	"sync"
	"time"
)

// The tombstone collector removes old tombstones from every peer
// (CollectTombstone), in passes of its own beside the repair scanner.
// Why not in the scanner's pass: the scanner checks every key at
// ScanRate (50 a second by default, so that repairs stay in the
// background), and a pass over a million keys takes hours; after a mass
// delete (a backup's prune, a log bucket's expiry) the tombstones would
// wait that long past their grace period, each one a record every
// listing of the bucket must skip. The collector walks the same merged
// listing but acts only on tombstones past the grace period, at
// CollectRate, and passes over live keys at listing speed. A tombstone
// it cannot collect yet (a copy missing or unreadable) is left to the
// scanner, whose repair completes it, and to the next pass.

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

// collectPass walks every bucket's keys once and collects each tombstone
// older than the grace period, one per tick, up to Workers at once. It
// returns how many it removed.
func (q *RepairQueue) collectPass(ctx context.Context, l *Layer, tick <-chan time.Time) (uint64, error) {
	buckets, err := l.ListBuckets(ctx)
	if err != nil {
		return 0, err
	}
	var (
		mu        sync.Mutex
		collected uint64
		wg        sync.WaitGroup
	)
	defer wg.Wait()
	slots := make(chan struct{}, q.cfg.Workers)
	for _, b := range buckets {
		for after := ""; ; {
			page, more, err := l.listKeys(ctx, b.Name, after, DefaultMaxKeys)
			if err != nil {
				return collected, err
			}
			cutoff := time.Now().Add(-q.cfg.TombstoneGrace)
			for _, e := range page {
				if !e.Deleted || !time.Unix(0, e.Stamp.Nanos).Before(cutoff) || q.queued(b.Name, e.Key) {
					continue
				}
				if err := waitTurn(ctx, tick, slots); err != nil {
					return collected, err
				}
				wg.Go(func() {
					defer func() { <-slots }()
					if q.collectOne(ctx, l, b.Name, e.Key, cutoff) {
						mu.Lock()
						collected++
						mu.Unlock()
					}
				})
			}
			if !more || len(page) == 0 {
				break
			}
			after = page[len(page)-1].Key
		}
	}
	wg.Wait()
	return collected, nil
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
