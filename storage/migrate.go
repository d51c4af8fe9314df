package storage

import (
	"context"
	"errors"
	"fmt"

	"tessera/meta"
)

// Relabel replaces the record of the version the peer holds with o, whose
// stamp and shard index must be the same: only what the record says about
// the other shards (the distribution, the epoch) changes, while this
// peer's shard files, or its inline bytes, stay as they are. Moving an
// object to a new placement relabels the peers that keep their shard.
// A newer record fails with meta.ErrStale, a missing one with
// meta.ErrNotFound.
func (s *Store) Relabel(ctx context.Context, o *meta.Object) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if o == nil {
		return invalid("nil object")
	}
	if err := checkBucketKey(o.Bucket, o.Key); err != nil {
		return err
	}
	unlock := s.lockKey(o.Bucket, o.Key)
	defer unlock()
	cur, err := s.readObject(o.Bucket, o.Key)
	if err != nil {
		return fmt.Errorf("relabel: %w", err)
	}
	switch {
	case o.Stamp.Less(cur.Stamp):
		return fmt.Errorf("relabel %s/%s: holds %v: %w", o.Bucket, o.Key, cur.Stamp, meta.ErrStale)
	case cur.Stamp != o.Stamp || cur.ShardIndex != o.ShardIndex || cur.Deleted != o.Deleted || cur.Inlined != o.Inlined:
		return invalid("relabel %s/%s: record of %v shard %d, peer holds %v shard %d",
			o.Bucket, o.Key, o.Stamp, o.ShardIndex, cur.Stamp, cur.ShardIndex)
	}
	rec := *o
	rec.Inline = cur.Inline
	b, err := meta.MarshalObject(&rec)
	if err != nil {
		return err
	}
	if err := s.writeRecord(s.objDir(o.Bucket, o.Key), "meta", b); err != nil {
		return fmt.Errorf("relabel %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// DropVersion removes the key's record and shard files if the peer holds
// exactly version st: the peer is no longer in the object's placement
// and its copy has been moved. A newer record fails with meta.ErrStale and
// stays; no record is meta.ErrNotFound.
func (s *Store) DropVersion(ctx context.Context, bucket, key string, st meta.Stamp) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := checkBucketKey(bucket, key); err != nil {
		return err
	}
	unlock := s.lockKey(bucket, key)
	defer unlock()
	cur, err := s.readObject(bucket, key)
	if err != nil && !errors.Is(err, meta.ErrCorrupt) {
		return fmt.Errorf("drop: %w", err)
	}
	if cur != nil && cur.Stamp != st {
		return fmt.Errorf("drop %s/%s %v: holds %v: %w", bucket, key, st, cur.Stamp, meta.ErrStale)
	}
	if err := s.removeTree(s.objDir(bucket, key)); err != nil {
		return fmt.Errorf("drop %s/%s: %w", bucket, key, err)
	}
	s.idx.remove(bucket, key)
	return nil
}

// LiveObjects is the number of live (not deleted) objects the store holds
// a copy of, across buckets.
func (s *Store) LiveObjects() int64 {
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	var n int64
	for _, bi := range s.idx.b {
		n += int64(bi.live)
	}
	return n
}
