package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// hasData reports whether a record points at shard files.
func hasData(o *meta.Object) bool { return !o.Deleted && !o.Inlined }

// checkObject validates what the store relies on in a record it is asked
// to commit, with nStaged the number of staged files that come with it.
func checkObject(o *meta.Object, nStaged int) error {
	if o == nil {
		return invalid("nil object")
	}
	if err := checkBucketKey(o.Bucket, o.Key); err != nil {
		return err
	}
	if !validStamp(o.Stamp) {
		return invalid("stamp %+v", o.Stamp)
	}
	if err := checkParts(o.Parts); err != nil {
		return err
	}
	if !hasData(o) {
		if nStaged != 0 {
			return invalid("%d staged files for a record without data", nStaged)
		}
		return nil
	}
	if len(o.Parts) == 0 || nStaged != len(o.Parts) {
		return invalid("%d staged files for %d parts", nStaged, len(o.Parts))
	}
	return nil
}

// Commit atomically makes o the key's record if its stamp is newer than the
// current one (else a *meta.StaleError naming the held stamp, and nothing
// changes). staged[i] is the StageShard id holding part o.Parts[i]; it must
// be empty for inlined objects and tombstones. See the package doc for the
// protocol. A successful commit consumes the staged ids; after any other
// failure they stay usable for a retry, and after a stale refusal for
// staleKeep (a writer whose stamp lost retries above the held one).
func (s *Store) Commit(ctx context.Context, o *meta.Object, staged []string) error {
	return s.commitStaged(ctx, "commit", o, staged, false)
}

// commitStaged validates o and its staged ids, then installs them under the
// key's lock; sameStamp also accepts a record with the held stamp (repair).
// A successful install consumes the staged files; after a failure they
// stay for a retry, a stale one included: the writer retries with a stamp
// above the held one, within one round trip, and after staleKeep they are
// removed. A repair never restamps, so its stale refusal consumes them.
func (s *Store) commitStaged(ctx context.Context, op string, o *meta.Object, staged []string, sameStamp bool) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if err := checkObject(o, len(staged)); err != nil {
		return err
	}
	for _, id := range staged {
		if !validTmpID(id) {
			return invalid("staged id %q", id)
		}
	}
	// A record with data is refused on a full disk before its index
	// write: a WAL write that runs out of space fails the whole store
	// until it is reopened (ErrIndexFailed), not just this commit.
	// Tombstones still go into the reserve, since deletes free space.
	if !o.Deleted {
		if err := s.refuseWhenFull(); err != nil {
			return fmt.Errorf("%s %s/%s: %w", op, o.Bucket, o.Key, err)
		}
	}
	unlock := s.lockKey(o.Bucket, o.Key)
	defer unlock()
	srcs := make([]string, len(staged))
	for i, id := range staged {
		srcs[i] = s.stagedPath(id)
	}
	err = s.installIf(o, srcs, ErrStagedNotFound, sameStamp)
	switch {
	case err == nil || (sameStamp && errors.Is(err, meta.ErrStale)):
		for _, p := range srcs {
			os.Remove(p)
		}
	case errors.Is(err, meta.ErrStale):
		s.dropLater(srcs)
	}
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", op, o.Bucket, o.Key, err)
	}
	return nil
}

// staleKeep is how long the staged files of a commit refused as stale wait
// for the writer's retry above the held stamp. The retry follows as soon as
// the writer has every peer's answer; a minute is ample.
const staleKeep = time.Minute

// dropLater removes paths once staleKeep has passed, unless a retry took
// them (a successful commit removes its staged names itself).
func (s *Store) dropLater(paths []string) {
	s.afterFunc(staleKeep, func() {
		for _, p := range paths {
			os.Remove(p)
		}
	})
}

// install runs the commit protocol for o with srcs[i] the file holding
// part o.Parts[i]; a missing source fails with missing. The caller holds
// the key lock. srcs are linked, not moved, so they survive a failure and
// the caller removes them on success.
func (s *Store) install(o *meta.Object, srcs []string, missing error) error {
	return s.installIf(o, srcs, missing, false)
}

// installIf is install that, with sameOK, also accepts a stamp equal to
// the current one: a repair rewriting a damaged copy of the same version.
// A repair also settles the version (kept.go); a plain install keeps the
// record it replaces.
func (s *Store) installIf(o *meta.Object, srcs []string, missing error, sameOK bool) error {
	if err := s.requireBucket(o.Bucket); err != nil {
		return err
	}
	curVal, cur, err := s.replacedHead(o)
	if err != nil {
		return err
	}
	same := cur != nil && cur.Stamp == o.Stamp
	if cur != nil && !cur.Stamp.Less(o.Stamp) && !(same && sameOK) {
		return fmt.Errorf("stamp %v not newer: %w", o.Stamp, &meta.StaleError{Held: cur.Stamp})
	}
	if cur != nil && !same {
		if err := lockForbids(cur, o, s.now()); err != nil {
			return err
		}
	}
	if same {
		if err := lockKept(cur, o); err != nil {
			return err
		}
	}
	plan, err := s.planKeep(o, cur, curVal, sameOK)
	if err != nil {
		return err
	}
	if err := s.placeData(o, srcs, missing, same); err != nil {
		return err
	}
	if err := s.putRecord(o, cur, plan); err != nil {
		// Maybe applied, maybe not: keep the new data, which the sweep
		// after the next Open collects if no record points at it.
		return err
	}
	s.retireKept(o.Bucket, o.Key, o, plan.drop)
	return nil
}

// replacedHead reads the record o replaces: none when the key has none or
// its record is damaged (a missing copy, which o overwrites; the damaged
// record's data dir is unknown and the sweep after the next Open collects
// it).
func (s *Store) replacedHead(o *meta.Object) (curVal []byte, cur *meta.Object, err error) {
	curVal, cur, err = s.readHead(o.Bucket, o.Key)
	switch {
	case errors.Is(err, meta.ErrNotFound):
		return nil, nil, nil
	case errors.Is(err, meta.ErrCorrupt):
		s.log.Warn().Err(err).Str("bucket", o.Bucket).Str("key", o.Key).Msg("replacing damaged record")
		return curVal, nil, nil
	}
	return curVal, cur, err
}

// placeData makes the data dir of o (one with shard files) with srcs
// linked in as its parts, durable before any record points at it; a
// record without data needs none. same reports that the current record
// already names that dir (a repair of the same version).
func (s *Store) placeData(o *meta.Object, srcs []string, missing error, same bool) error {
	if !hasData(o) {
		return nil
	}
	dir := s.objDir(o.Bucket, o.Key)
	newData := filepath.Join(dir, dataDirName(o.Stamp))
	// One flush makes the new dirs and links durable (the staged contents
	// were synced by StageShard or CommitPart) before the record that
	// points at them.
	b := s.batch()
	err := mkdirs(s.dir, dir, b)
	if err == nil {
		err = s.placeParts(newData, o.Parts, srcs, missing, b)
	}
	if err == nil {
		err = b.flush()
	}
	if err != nil {
		if !same { // the same version's dir still backs the current record
			os.RemoveAll(newData)
		}
		return err
	}
	return nil
}

// putRecord makes o the key's record, replacing cur (nil: none, or
// damaged), with the kept list plan, in one synced index batch with the
// live count and, for a record with data, the entry the sweep finds the
// key of its object dir by. Concurrent callers share the WAL's fsyncs.
// The caller holds the key lock and has made durable everything o points
// at.
func (s *Store) putRecord(o, cur *meta.Object, plan keepPlan) error {
	b := s.db.NewBatch()
	if err := s.stageRecord(b, o, cur, plan); err != nil {
		b.Close()
		return err
	}
	return s.apply(b)
}

// stageRecord adds to b the writes that make o the key's record in place
// of cur (putRecord's, for a batch of several keys).
func (s *Store) stageRecord(b *pebble.Batch, o, cur *meta.Object, plan keepPlan) error {
	rec, err := meta.MarshalObject(o)
	if err != nil {
		return err
	}
	b.Set(objKey(o.Bucket, o.Key), encodeRecord(s.gen.Add(1), len(plan.list) > 0, rec), nil)
	plan.stage(b, o.Bucket, o.Key)
	stageTombstone(b, o.Bucket, o.Key, cur, o)
	if hasData(o) {
		b.Set(hashKey(o.Bucket, keyHash(o.Key)), []byte(o.Key), nil)
	}
	if d := liveDelta(cur, o); d != 0 {
		b.Merge(countKey(o.Bucket), delta(d), nil)
	}
	return nil
}

// placeParts links srcs[i] into dataDir as part.<parts[i].Number> and adds
// the new entries to b, whose next flush makes them durable. A missing
// source fails with missing.
func (s *Store) placeParts(dataDir string, parts []meta.Part, srcs []string, missing error, b *syncBatch) error {
	if err := mkdirs(s.dir, dataDir, b); err != nil {
		return err
	}
	for i, p := range parts {
		err := place(srcs[i], filepath.Join(dataDir, partFileName(p.Number)))
		if isNotExist(err) {
			return fmt.Errorf("part %d: %w", p.Number, missing)
		}
		if err != nil {
			return fmt.Errorf("part %d: %w", p.Number, err)
		}
	}
	b.add(dataDir)
	return nil
}
