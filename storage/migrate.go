package storage

import (
	"context"
	"errors"
	"fmt"

	"tessera/meta"
)

// Relabel gives the record of the version the peer holds o's distribution
// and epoch; o's stamp and shard index must be the same. Only what the
// record says about the other shards changes: the rest of the record
// (its headers, so its object lock, above all) and this peer's shard
// files or inline bytes stay as they are. Moving an object to a new
// placement relabels the peers that keep their shard.
// A newer record fails with meta.ErrStale, a missing one with
// meta.ErrNotFound.
func (s *Store) Relabel(ctx context.Context, o *meta.Object) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if o == nil {
		return invalid("nil object")
	}
	if err := checkBucketKey(o.Bucket, o.Key); err != nil {
		return err
	}
	unlock := s.lockKey(o.Bucket, o.Key)
	defer unlock()
	curVal, cur, err := s.readHead(o.Bucket, o.Key)
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
	rec := *cur
	rec.Distribution, rec.Epoch = o.Distribution, o.Epoch
	// The kept list stays as it is: the version is the same.
	keep := keepPlan{}
	if valueHasKept(curVal) {
		if keep.list, err = s.readKept(o.Bucket, o.Key); err != nil {
			return fmt.Errorf("relabel %s/%s: %w", o.Bucket, o.Key, err)
		}
	}
	if err := s.putRecord(&rec, cur, keep); err != nil {
		return fmt.Errorf("relabel %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// DropVersion removes the key's record and shard files if the peer holds
// exactly version st: the peer is no longer in the object's placement
// and its copy has been moved. A newer record fails with meta.ErrStale and
// stays; no record is meta.ErrNotFound. A locked version stays on a peer
// its placement holds (meta.ErrObjectLocked; see dropForbidden).
func (s *Store) DropVersion(ctx context.Context, bucket, key string, st meta.Stamp) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
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
	if err := s.dropForbidden(cur, s.now()); err != nil {
		return err
	}
	// The record goes first, so that nothing points at the data when it
	// goes; a crash in between leaves a dir the sweep collects.
	b := s.db.NewBatch()
	b.Delete(objKey(bucket, key), nil)
	b.Delete(keptKey(bucket, key), nil)
	b.Delete(hashKey(bucket, keyHash(key)), nil)
	stageTombstone(b, bucket, key, cur, nil)
	if d := liveDelta(cur, nil); d != 0 {
		b.Merge(countKey(bucket), delta(d), nil)
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("drop %s/%s: %w", bucket, key, err)
	}
	if err := s.removeTree(s.objDir(bucket, key)); err != nil && !isNotExist(err) {
		return fmt.Errorf("drop %s/%s: %w", bucket, key, err)
	}
	return nil
}
