package object

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"tessera/meta"
	"tessera/objectlock"
)

const (
	// resolveParallelism bounds the keys of a batch delete being resolved
	// at once: reads, which the peers answer from their caches.
	resolveParallelism = 16
	// tombBatchMax bounds the tombstones of one peer call. A call's
	// deadline follows the peer's latency on single calls (at least
	// StallAfter, a second), which a few hundred point reads and one fsync
	// keep well within; and the keys of one request go in several calls,
	// overlapping one chunk's reads with another's fsync.
	tombBatchMax = 250
	// tombBatchParallelism is how many chunks of one request are in
	// flight at once.
	tombBatchParallelism = 2
)

// DeleteObjects deletes keys of bucket, as DeleteObjectWith does each one
// without a condition, and answers each key's error in order (nil for a
// key deleted or never there). The keys must be distinct, at most
// meta.MaxBatch. Every peer commits its share of the tombstones in a few
// calls, each one durable write (ShardClient.CommitTombstones), so
// deleting a thousand keys costs a peer four fsyncs instead of a
// thousand. A key whose tombstone lost to a newer stamp on too many
// peers is deleted again alone, restamped, as DeleteObjectWith would.
func (l *Layer) DeleteObjects(ctx context.Context, bucket string, keys []string, bypassGovernance bool) []error {
	errs := make([]error, len(keys))
	if len(keys) == 0 {
		return errs
	}
	if len(keys) > meta.MaxBatch || len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
		for i := range errs {
			errs[i] = fmt.Errorf("delete %d keys of %s: %w", len(keys), bucket, meta.ErrInvalidArgument)
		}
		return errs
	}
	opts := DeleteOptions{BypassGovernance: bypassGovernance}
	if l.cfg.CutCommits > 0 {
		// The crash tests cut one write's commits at a shard: keep their
		// one write per key.
		l.each(len(keys), resolveParallelism, func(i int) { errs[i] = l.DeleteObjectWith(ctx, bucket, keys[i], opts) })
		return errs
	}
	chunks := (len(keys) + tombBatchMax - 1) / tombBatchMax
	l.each(chunks, tombBatchParallelism, func(c int) {
		lo, hi := c*tombBatchMax, min((c+1)*tombBatchMax, len(keys))
		l.deleteChunk(ctx, bucket, keys[lo:hi], errs[lo:hi], opts)
	})
	return errs
}

// deleteChunk is DeleteObjects for keys that fit one peer call each.
func (l *Layer) deleteChunk(ctx context.Context, bucket string, keys []string, errs []error, opts DeleteOptions) {
	tombs := l.tombstonesFor(ctx, bucket, keys, opts.BypassGovernance, errs)
	b := l.newTombBatch(ctx, bucket, tombs)
	b.send(ctx)
	for k := range keys {
		if tombs[k] == nil {
			continue
		}
		rs, err := b.settle(k)
		if err != nil && l.observeStale(rs) && ctx.Err() == nil {
			err = l.deleteObject(ctx, bucket, keys[k], opts)
		}
		if err != nil {
			errs[k] = fmt.Errorf("delete %s/%s: %w", bucket, keys[k], err)
		}
	}
}

// each runs fn(0..n-1) on at most par goroutines and waits for them.
func (l *Layer) each(n, par int, fn func(i int)) {
	var g errgroup.Group
	g.SetLimit(par)
	for i := range n {
		g.Go(func() error { fn(i); return nil })
	}
	g.Wait()
}

// tombstonesFor resolves each key and returns the tombstone that replaces
// its current version, stamped; nil where the key has none (errs[i] nil)
// or could not be read (errs[i] says why).
func (l *Layer) tombstonesFor(ctx context.Context, bucket string, keys []string, bypass bool, errs []error) []*meta.Object {
	tombs := make([]*meta.Object, len(keys))
	l.each(len(keys), resolveParallelism, func(i int) {
		v, err := l.resolve(ctx, bucket, keys[i])
		switch {
		case errors.Is(err, ErrObjectNotFound):
			return
		case err != nil:
			errs[i] = fmt.Errorf("delete %s/%s: %w", bucket, keys[i], err)
			return
		}
		o := v.obj
		t := &meta.Object{Bucket: bucket, Key: keys[i], Deleted: true, StorageClass: o.StorageClass,
			Code: o.Code, BlockSize: o.BlockSize, Distribution: o.Distribution}
		if bypass {
			t.Headers = objectlock.BypassMark()
		}
		l.stampRecord(t)
		tombs[i] = t
	})
	return tombs
}

// tombBatch is one batch delete's tombstones grouped by peer.
type tombBatch struct {
	l      *Layer
	bucket string
	tombs  []*meta.Object
	// ready[k][i] is nil when shard i of key k is sent (leaveOut).
	ready [][]error
	peers []meta.PeerID
	// share[j] lists, for peers[j], the (key, shard) pairs it commits.
	share [][]slot
	// at[k][i] is the index of key k's shard i in its peer's share.
	at    [][]int
	calls []reply[[]error]
	byID  map[meta.PeerID]int
}

type slot struct{ key, shard int }

func (l *Layer) newTombBatch(ctx context.Context, bucket string, tombs []*meta.Object) *tombBatch {
	b := &tombBatch{l: l, bucket: bucket, tombs: tombs, ready: make([][]error, len(tombs)),
		at: make([][]int, len(tombs)), byID: map[meta.PeerID]int{}}
	for k, t := range tombs {
		if t == nil {
			continue
		}
		b.ready[k] = make([]error, len(t.Distribution))
		if !asksAll(ctx) {
			b.ready[k] = l.leaveOut(t.Distribution, b.ready[k], t.Code.WriteQuorum())
		}
		b.at[k] = make([]int, len(t.Distribution))
		for i, p := range t.Distribution {
			if b.ready[k][i] != nil {
				continue
			}
			j, ok := b.byID[p]
			if !ok {
				j = len(b.peers)
				b.byID[p] = j
				b.peers = append(b.peers, p)
				b.share = append(b.share, nil)
			}
			b.at[k][i] = len(b.share[j])
			b.share[j] = append(b.share[j], slot{k, i})
		}
	}
	return b
}

// need is how many peers' answers the batch waits for before the grace
// that cuts the slow rest: every peer but the fewest any one key can do
// without among the peers it was sent to, so that cutting the rest costs
// no key its quorum.
func (b *tombBatch) need() int {
	slack := len(b.peers)
	for k, t := range b.tombs {
		if t == nil {
			continue
		}
		sent := 0
		for _, err := range b.ready[k] {
			if err == nil {
				sent++
			}
		}
		slack = min(slack, sent-t.Code.WriteQuorum())
	}
	return len(b.peers) - max(slack, 0)
}

// send commits every peer's share in one call each, in parallel.
func (b *tombBatch) send(ctx context.Context) {
	if len(b.peers) == 0 {
		return
	}
	// Each key left out the peers it could do without (newTombBatch);
	// the rest are all asked.
	b.calls = fanoutQuorum(everyPeer(ctx), b.l, b.peers, b.l.cfg.PeerTimeout, b.need(), func(ctx context.Context, j int, c ShardClient) ([]error, error) {
		recs := make([]*meta.Object, len(b.share[j]))
		for n, s := range b.share[j] {
			rec := *b.tombs[s.key]
			rec.ShardIndex = s.shard
			recs[n] = &rec
		}
		errs, err := c.CommitTombstones(ctx, b.bucket, recs)
		if err == nil && len(errs) != len(recs) {
			err = fmt.Errorf("peer %s: %d answers for %d tombstones", b.peers[j], len(errs), len(recs))
		}
		return errs, err
	})
}

// replies is key k's outcome on each peer of its distribution, as a
// commit of that key alone would have gathered it.
func (b *tombBatch) replies(k int) []reply[struct{}] {
	t := b.tombs[k]
	rs := make([]reply[struct{}], len(t.Distribution))
	for i, p := range t.Distribution {
		rs[i].peer = p
		if rs[i].err = b.ready[k][i]; rs[i].err != nil {
			continue
		}
		c := b.calls[b.byID[p]]
		if rs[i].err = c.err; rs[i].err == nil {
			rs[i].err = c.val[b.at[k][i]]
		}
	}
	return rs
}

// settle decides key k as commitVersion decides a write: acknowledged on
// a write quorum, the tombstone settles on the peers that took it. It
// returns the key's replies, whose stale refusals (observeStale) say
// whether it lost to a newer stamp.
func (b *tombBatch) settle(k int) ([]reply[struct{}], error) {
	t, rs := b.tombs[k], b.replies(k)
	if err := b.l.settleWrite("delete", t.Bucket, t.Key, t.Stamp, rs, t.Code.WriteQuorum()); err != nil {
		return rs, err
	}
	b.l.settleAcked(t, rs)
	return rs, nil
}
