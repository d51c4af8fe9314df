package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := checkObject(o, len(staged)); err != nil {
		return err
	}
	for _, id := range staged {
		if !validTmpID(id) {
			return invalid("staged id %q", id)
		}
	}
	unlock := s.lockKey(o.Bucket, o.Key)
	defer unlock()
	srcs := make([]string, len(staged))
	for i, id := range staged {
		srcs[i] = s.stagedPath(id)
	}
	err := s.installIf(o, srcs, ErrStagedNotFound, sameStamp)
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
func (s *Store) installIf(o *meta.Object, srcs []string, missing error, sameOK bool) error {
	if err := s.requireBucket(o.Bucket); err != nil {
		return err
	}
	cur, err := s.readObject(o.Bucket, o.Key)
	switch {
	case errors.Is(err, meta.ErrNotFound):
		cur = nil
	case errors.Is(err, meta.ErrCorrupt):
		// A damaged record is a missing copy: overwrite it. Its data dir
		// is unknown and is collected by the next Open.
		s.log.Warn().Err(err).Str("bucket", o.Bucket).Str("key", o.Key).Msg("replacing damaged record")
		cur = nil
	case err != nil:
		return err
	}
	same := cur != nil && cur.Stamp == o.Stamp
	if cur != nil && !cur.Stamp.Less(o.Stamp) && !(same && sameOK) {
		return fmt.Errorf("stamp %v not newer: %w", o.Stamp, &meta.StaleError{Held: cur.Stamp})
	}
	dir := s.objDir(o.Bucket, o.Key)
	if err := mkdirs(s.dir, dir); err != nil {
		return err
	}
	newData := ""
	if hasData(o) {
		newData = filepath.Join(dir, dataDirName(o.Stamp))
		if err := s.placeParts(newData, o.Parts, srcs, missing); err != nil {
			if !same { // the same version's dir still backs the current record
				os.RemoveAll(newData)
			}
			return err
		}
	}
	rec, err := meta.MarshalObject(o)
	if err != nil {
		return err
	}
	visible, err := s.replaceRecord(dir, "meta", rec)
	if !visible {
		if newData != "" && !same {
			os.RemoveAll(newData)
		}
		return err
	}
	s.idx.put(o.Bucket, meta.EntryOf(o))
	if err != nil {
		// Visible but maybe not durable: keep the old data, which the next
		// Open collects if the new record survived.
		return err
	}
	if cur != nil && hasData(cur) && filepath.Join(dir, dataDirName(cur.Stamp)) != newData {
		// Reads that resolved cur just now have yet to open its shards.
		s.retire(o.Bucket, o.Key, dataDirName(cur.Stamp))
	}
	return nil
}

// placeParts links srcs[i] into dataDir as part.<parts[i].Number> and
// makes the result durable. A missing source fails with missing.
func (s *Store) placeParts(dataDir string, parts []meta.Part, srcs []string, missing error) error {
	if err := mkdirs(s.dir, dataDir); err != nil {
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
	return syncDir(dataDir)
}
