package object

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"tessera/meta"
)

// DefaultTombstoneGrace is how long a tombstone is kept at least, counted
// from its stamp, before CollectTombstone may remove it.
const DefaultTombstoneGrace = 24 * time.Hour

// CollectTombstone removes the tombstone of bucket/key from every peer
// once the delete is complete and old enough, so that a deleted key
// finally costs no record and no start-up time. It reports whether the key
// was collected; false with a nil error means it must stay for now (not a
// tombstone, too young, or some copy not where it must be), which a
// repair pass, then a later call, resolves.
//
// Removing a tombstone must never let an older version of the key come
// back. An older version returns if a read or a repair finds it again, so
// the tombstone goes only when:
//
//   - every peer the key may live on answers: the placements of every code
//     in use under the current ring and under every older layout data may
//     still sit on (the read path's query set), plus the tombstone's own
//     distribution. An unreachable peer may hold the old version; a copy
//     the scanner could not read is kept.
//   - none of them holds a live record, nor a record newer than the
//     tombstone (a write landed since: nothing to collect). Each holds the
//     tombstone, an older one, or nothing at all (a peer whose copy an
//     earlier, interrupted collection already removed, or a wiped disk):
//     none of these can bring data back.
//   - the tombstone's stamp is older than before (now minus the grace
//     period). What the record check cannot see is work already in
//     flight with an older version: a PUT whose commit was stamped before
//     the delete, or a repair or data move that resolved the old version
//     before the delete reached a quorum and is about to commit it. With
//     the tombstone gone such a commit would find no record to be stale
//     against and would reinstate the old version. Those calls are bounded
//     by request and repair timeouts (minutes) and by the time one object
//     takes to move to a new placement, so a grace period far above them
//     (DefaultTombstoneGrace, a day) outlives them all. The stamp's clock
//     is the deleting gateway's; skew between gateways is seconds.
//
// A peer outside every placement the ring still knows (one removed long
// ago and restarted with its old disk) is not asked; a copy there can
// only be read once k such copies sit where the ring places the key.
//
// The drops are DropVersion calls for the exact stamp each peer holds, so
// a write racing the collection wins: a peer that took a newer record
// meanwhile keeps it (meta.ErrStale), and a peer whose copy is gone
// accepts any new write as it would for a key never written.
func (l *Layer) CollectTombstone(ctx context.Context, bucket, key string, before time.Time) (bool, error) {
	ctx = quiet(ctx)
	q, err := l.querySet(bucket, key)
	if err != nil {
		return false, err
	}
	held, tomb, err := l.readEveryCopy(ctx, q.peers, bucket, key)
	if err != nil || tomb == nil || !tomb.Deleted || !time.Unix(0, tomb.Stamp.Nanos).Before(before) {
		return false, err
	}
	var extra []meta.PeerID
	for _, p := range tomb.Distribution {
		if !slices.Contains(q.peers, p) {
			extra = append(extra, p)
		}
	}
	more, _, err := l.readEveryCopy(ctx, extra, bucket, key)
	if err != nil {
		return false, err
	}
	for p, o := range more {
		held[p] = o
	}
	for _, o := range held {
		if !o.Deleted || tomb.Stamp.Less(o.Stamp) {
			return false, nil
		}
	}
	if err := l.dropCopies(ctx, bucket, key, held); err != nil {
		if errors.Is(err, meta.ErrStale) {
			return false, nil // written again meanwhile
		}
		return false, fmt.Errorf("collect tombstone %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// errUnread reports a peer whose copy of a key could not be read.
var errUnread = errors.New("copy not readable")

// readEveryCopy reads the key's record on every peer and returns the
// records held, by peer, and the newest of them. It fails unless every
// peer answered with a valid record or the knowledge that it has none.
func (l *Layer) readEveryCopy(ctx context.Context, peers []meta.PeerID, bucket, key string) (map[meta.PeerID]*meta.Object, *meta.Object, error) {
	rs := fanout(ctx, l, peers, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) (*meta.Object, error) {
		return c.ReadMeta(ctx, bucket, key)
	})
	held := map[meta.PeerID]*meta.Object{}
	var newest *meta.Object
	for _, r := range rs {
		err := r.err
		if err == nil {
			err = checkRecord(r.val, r.peer, bucket, key)
		}
		switch {
		case errors.Is(err, meta.ErrNotFound), errors.Is(err, meta.ErrBucketNotFound):
		case err != nil:
			return nil, nil, fmt.Errorf("%w on %s: %w", errUnread, r.peer, err)
		default:
			held[r.peer] = r.val
			if newest == nil || newest.Stamp.Less(r.val.Stamp) {
				newest = r.val
			}
		}
	}
	return held, newest, nil
}

// dropCopies removes from each peer the exact record it was seen holding.
func (l *Layer) dropCopies(ctx context.Context, bucket, key string, held map[meta.PeerID]*meta.Object) error {
	peers := make([]meta.PeerID, 0, len(held))
	for p := range held {
		peers = append(peers, p)
	}
	rs := fanout(ctx, l, peers, l.cfg.PeerTimeout, func(ctx context.Context, i int, c ShardClient) (struct{}, error) {
		m, ok := c.(Dropper)
		if !ok {
			return struct{}{}, errors.New("peer cannot drop a version")
		}
		return struct{}{}, m.DropVersion(ctx, bucket, key, held[peers[i]].Stamp)
	})
	var errs []error
	for _, r := range rs {
		if r.err != nil && !errors.Is(r.err, meta.ErrNotFound) {
			errs = append(errs, fmt.Errorf("drop on %s: %w", r.peer, r.err))
		}
	}
	return errors.Join(errs...)
}
