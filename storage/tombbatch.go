package storage

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// CommitTombstones commits tombstones of several keys of bucket in one
// synced index write, so a batch delete costs the peer one fsync rather
// than one per key. Each is decided as Commit decides it alone (stale,
// locked), and errs[i] is the answer for os[i]; err is for the whole call
// (the store closed, a malformed batch, the bucket missing, the index
// write failing), with nothing committed. Concurrent commits of the same
// keys serialise with these on the keys' locks, as Commit's do.
func (s *Store) CommitTombstones(ctx context.Context, bucket string, os []*meta.Object) (errs []error, err error) {
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := checkTombstones(bucket, os); err != nil {
		return nil, err
	}
	keys := make([]string, len(os))
	for i, o := range os {
		keys[i] = o.Key
	}
	unlock := s.lockKeys(bucket, keys...)
	defer unlock()
	if err := s.requireBucket(bucket); err != nil {
		return nil, err
	}
	errs = make([]error, len(os))
	plans := make([]keepPlan, len(os))
	b := s.db.NewBatch()
	staged := 0
	for i, o := range os {
		plans[i], errs[i] = s.stageTombstoneCommit(b, o)
		if errs[i] == nil {
			staged++
		} else {
			errs[i] = fmt.Errorf("commit %s/%s: %w", bucket, o.Key, errs[i])
		}
	}
	if staged == 0 {
		b.Close()
		return errs, nil
	}
	if err := s.apply(b); err != nil {
		return nil, fmt.Errorf("commit %d tombstones in %s: %w", staged, bucket, err)
	}
	for i, o := range os {
		if errs[i] == nil {
			s.retireKept(bucket, o.Key, o, plans[i].drop)
		}
	}
	return errs, nil
}

// checkTombstones validates a batch: tombstones of bucket, each key once.
func checkTombstones(bucket string, os []*meta.Object) error {
	if len(os) == 0 || len(os) > meta.MaxBatch {
		return invalid("%d tombstones in a batch, 1 to %d", len(os), meta.MaxBatch)
	}
	seen := make(map[string]bool, len(os))
	for _, o := range os {
		if err := checkObject(o, 0); err != nil {
			return err
		}
		if !o.Deleted || o.Bucket != bucket {
			return invalid("batch record %s/%s: a tombstone of %s wanted", o.Bucket, o.Key, bucket)
		}
		if seen[o.Key] {
			return invalid("key %q twice in a batch", o.Key)
		}
		seen[o.Key] = true
	}
	return nil
}

// stageTombstoneCommit decides tombstone o against the key's record as
// installIf does and adds its writes to b. The caller holds the key lock.
func (s *Store) stageTombstoneCommit(b *pebble.Batch, o *meta.Object) (keepPlan, error) {
	curVal, cur, err := s.replacedHead(o)
	if err != nil {
		return keepPlan{}, err
	}
	if cur != nil && !cur.Stamp.Less(o.Stamp) {
		return keepPlan{}, fmt.Errorf("stamp %v not newer: %w", o.Stamp, &meta.StaleError{Held: cur.Stamp})
	}
	if cur != nil {
		if err := lockForbids(cur, o, s.now()); err != nil {
			return keepPlan{}, err
		}
	}
	plan, err := s.planKeep(o, cur, curVal, false)
	if err != nil {
		return keepPlan{}, err
	}
	return plan, s.stageRecord(b, o, cur, plan)
}
