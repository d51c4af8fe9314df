package object

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"tessera/meta"
)

// Mover is implemented by shard clients that can take part in moving an
// object to a new placement (peer.Client, storage.Store).
type Mover interface {
	// Relabel rewrites the record of the version the peer holds (same
	// stamp and shard) with another distribution, keeping its data.
	Relabel(ctx context.Context, o *meta.Object) error
	Dropper
}

// Dropper is implemented by shard clients that can remove one version's
// record and data: a peer leaving an object's placement, or a tombstone
// being collected (CollectTombstone).
type Dropper interface {
	// DropVersion removes the peer's copy of exactly version st; a newer
	// copy stays (meta.ErrStale), no copy is meta.ErrNotFound.
	DropVersion(ctx context.Context, bucket, key string, st meta.Stamp) error
}

// MigrateResult reports one MigrateObject call.
type MigrateResult struct {
	Moved []int // shard indexes that changed peer
	// Bytes is the shard data written to new peers.
	Bytes int64
}

// stickyDistribution maps the shards of old onto the placement set want:
// a shard whose peer stays in the set stays where it is, and only the
// shards of peers that left go to the peers that joined (research A6
// item 8). Otherwise one peer entering the walk would shift every later
// shard index and move data that need not move.
func stickyDistribution(old, want []meta.PeerID) (dist []meta.PeerID, moved []int) {
	var joined []meta.PeerID
	for _, p := range want {
		if !slices.Contains(old, p) {
			joined = append(joined, p)
		}
	}
	dist = slices.Clone(old)
	for i, p := range old {
		if !slices.Contains(want, p) && len(joined) > 0 {
			dist[i], joined = joined[0], joined[1:]
			moved = append(moved, i)
		}
	}
	return dist, moved
}

// MigrateObject moves the current version of bucket/key to the placement
// of the current ring: the shards of peers that left the placement are
// rebuilt on the peers that joined it (same stamp), the peers that keep
// their shard get the new distribution in their record, and only then do
// the leaving peers drop their copies. Every step is safe to interrupt:
// until the last one, both placements hold complete copies of the same
// version, which reads (that consult both epochs) treat as one. A newer
// write that lands meanwhile wins everywhere; nothing here replaces it.
func (l *Layer) MigrateObject(ctx context.Context, bucket, key string) (MigrateResult, error) {
	ctx = quiet(ctx)
	q, err := l.querySet(bucket, key)
	if err != nil {
		return MigrateResult{}, err
	}
	v, _, err := l.readMeta(ctx, q, bucket, key)
	if err != nil || v == nil {
		return MigrateResult{}, err
	}
	o := v.obj
	want, err := l.cfg.Cluster.Placement(bucket, key, o.Code.N())
	if err != nil {
		return MigrateResult{}, err
	}
	dist, moved := stickyDistribution(o.Distribution, want)
	if len(moved) == 0 {
		return MigrateResult{}, l.dropStrays(ctx, o)
	}
	h, err := l.survey(ctx, o)
	if err != nil {
		return MigrateResult{}, err
	}
	if err := h.incomplete(); err != nil {
		return MigrateResult{}, fmt.Errorf("migrate %s/%s: %w", bucket, key, err)
	}
	next := *o
	next.Distribution = dist
	res := MigrateResult{Moved: moved}
	if err := l.copyShards(ctx, h, &next, moved, &res); err != nil {
		return res, fmt.Errorf("migrate %s/%s: %w", bucket, key, err)
	}
	var keep []int
	for i := range dist {
		if h.v.holders[i] != nil && !slices.Contains(moved, i) {
			keep = append(keep, i)
		}
	}
	if err := l.relabel(ctx, &next, keep); err != nil {
		return res, fmt.Errorf("migrate %s/%s: %w", bucket, key, err)
	}
	for _, i := range moved {
		if err := l.dropCopy(ctx, o.Distribution[i], bucket, key, o.Stamp); err != nil {
			return res, fmt.Errorf("migrate %s/%s: drop shard %d from %s: %w", bucket, key, i, o.Distribution[i], err)
		}
	}
	return res, l.dropStrays(ctx, &next)
}

// dropCopy removes peer id's copy of version st of the key; a copy
// already gone or replaced by a newer one is no error.
func (l *Layer) dropCopy(ctx context.Context, id meta.PeerID, bucket, key string, st meta.Stamp) error {
	_, err := call(ctx, l, id, l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (struct{}, error) {
		m, ok := c.(Mover)
		if !ok {
			return struct{}{}, errors.New("peer cannot drop a version")
		}
		return struct{}{}, m.DropVersion(ctx, bucket, key, st)
	})
	if errors.Is(err, meta.ErrNotFound) || errors.Is(err, meta.ErrStale) {
		return nil
	}
	return err
}

// dropStrays removes the copies of o's key that peers leaving the ring
// hold outside o's distribution, o being the key's current version where
// it belongs. A write placed by the old layout that committed after the
// move passes had looked at its key, or a repair racing a move, can leave
// such a copy; the object reads whole without it, but a draining peer
// that holds anything never leaves the ring. Only o's version or an older
// one goes (a newer copy is a write in flight, moved in its turn), and
// only once o's version is complete on its own peers.
func (l *Layer) dropStrays(ctx context.Context, o *meta.Object) error {
	lv, ok := l.cfg.Cluster.(Leaver)
	if !ok {
		return nil
	}
	strays := map[meta.PeerID]meta.Stamp{}
	for _, id := range lv.Leaving() {
		if slices.Contains(o.Distribution, id) || l.avoided(id) {
			continue // a peer that is down is cleared when it is back
		}
		rec, err := call(ctx, l, id, l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (*meta.Object, error) {
			return c.ReadMeta(ctx, o.Bucket, o.Key)
		})
		switch {
		case errors.Is(err, meta.ErrNotFound) || isBucketNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("stray copies of %s/%s: %w", o.Bucket, o.Key, err)
		case !o.Stamp.Less(rec.Stamp):
			strays[id] = rec.Stamp
		}
	}
	if len(strays) == 0 {
		return nil
	}
	h, err := l.survey(ctx, o)
	if err != nil {
		return err
	}
	if err := h.incomplete(); err != nil {
		return fmt.Errorf("stray copies of %s/%s: %w", o.Bucket, o.Key, err)
	}
	for id, st := range strays {
		if err := l.dropCopy(ctx, id, o.Bucket, o.Key, st); err != nil {
			return fmt.Errorf("stray copy of %s/%s on %s: %w", o.Bucket, o.Key, id, err)
		}
		l.log.Info().Str("bucket", o.Bucket).Str("key", o.Key).Str("peer", string(id)).
			Stringer("stamp", st).Msg("stray copy on a leaving peer dropped")
	}
	return nil
}

// copyShards writes the moved shards of next onto their new peers, rebuilt
// (the repair path, aimed at the new peers) from every holder of the old
// distribution, leaving peers included: until the last step they keep
// their copies, and a change that moves more than m shards of an object
// leaves too few staying peers to rebuild from.
func (l *Layer) copyShards(ctx context.Context, h *heal, next *meta.Object, moved []int, res *MigrateResult) error {
	nh := &heal{v: &version{obj: next, holders: map[int]*meta.Object{}, absent: map[int]bool{}, failed: map[int]bool{}},
		unreachable: map[int]error{}, from: h.v}
	for i, rec := range h.v.holders {
		if !slices.Contains(moved, i) {
			nh.v.holders[i] = rec
		}
	}
	// A staying peer that lacks its shard is repaired in the same pass.
	nh.targets = slices.Clone(moved)
	for i := range next.Distribution {
		if h.v.holders[i] == nil && !slices.Contains(moved, i) {
			nh.targets = append(nh.targets, i)
		}
	}
	slices.Sort(nh.targets)
	done, err := l.rebuild(ctx, nh)
	if err != nil {
		return err
	}
	if len(done) != len(nh.targets) {
		return fmt.Errorf("%d of %d shards committed", len(done), len(nh.targets))
	}
	if !next.Deleted && !next.Inlined {
		ec, err := l.coder(next.Code, next.BlockSize)
		if err != nil {
			return err
		}
		for _, p := range partsOf(next) {
			res.Bytes += int64(len(moved)) * ec.ShardFileSize(p.Size)
		}
	}
	return nil
}

// relabel gives the peers of shards keep, which hold their shard and
// stay, the new distribution.
func (l *Layer) relabel(ctx context.Context, next *meta.Object, keep []int) error {
	stay := make([]meta.PeerID, len(keep))
	idx := keep
	for j, i := range keep {
		stay[j] = next.Distribution[i]
	}
	rs := fanout(ctx, l, stay, l.cfg.PeerTimeout, func(ctx context.Context, j int, c ShardClient) (struct{}, error) {
		m, ok := c.(Mover)
		if !ok {
			return struct{}{}, errors.New("peer cannot relabel")
		}
		rec := *next
		rec.ShardIndex, rec.Inline = idx[j], nil
		return struct{}{}, m.Relabel(ctx, &rec)
	})
	for _, r := range rs {
		if r.err != nil && !errors.Is(r.err, meta.ErrStale) {
			return fmt.Errorf("relabel on %s: %w", r.peer, r.err)
		}
	}
	return nil
}

// SyncBuckets creates on every peer of the ring the buckets it lacks: a
// peer that joined after a bucket was made must hold its record before
// objects of the bucket can be placed on it.
func (l *Layer) SyncBuckets(ctx context.Context) error {
	buckets, err := l.ListBuckets(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range l.cfg.Cluster.Peers() {
		_, err := call(ctx, l, id, l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (struct{}, error) {
			have, err := c.ListBuckets(ctx)
			if err != nil {
				return struct{}{}, err
			}
			for _, b := range buckets {
				if slices.ContainsFunc(have, func(h meta.Bucket) bool { return h.Name == b.Name }) {
					continue
				}
				err := c.MakeBucket(ctx, meta.Bucket{Name: b.Name, Created: b.Created})
				if err != nil && !errors.Is(err, meta.ErrBucketExists) {
					return struct{}{}, fmt.Errorf("make bucket %s: %w", b.Name, err)
				}
			}
			return struct{}{}, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("peer %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}
