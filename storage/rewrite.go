package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/uuid"

	"tessera/meta"
)

// Rewrite makes o, a new version of the key with the same data as the
// version from the peer holds as its current record, the key's record
// without moving any bytes: o's shard files are hard links to from's (a
// shard file holds no stamp) and its inline bytes are this peer's copy of
// from's. Only what a record says about the object can differ (headers,
// user metadata, content type, storage class: tags, object lock, ...);
// size, ETag, code, block size, parts, shard index and upload must match.
// It commits as Commit does: a stamp not above the held one is
// meta.ErrStale, an object lock that forbids the change is
// meta.ErrObjectLocked, and the replaced version is kept until settled.
// A peer whose current record is not from fails with meta.ErrNotFound
// (it lacks the version: repair brings o to it later) or, holding a newer
// one, a *meta.StaleError naming it.
func (s *Store) Rewrite(ctx context.Context, o *meta.Object, from meta.Stamp) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if o == nil {
		return invalid("nil object")
	}
	staged := 0
	if hasData(o) {
		staged = len(o.Parts)
	}
	if err := checkObject(o, staged); err != nil {
		return err
	}
	if o.Deleted || o.DeleteMarker {
		return invalid("rewrite %s/%s: a rewrite keeps data, and a deletion has none", o.Bucket, o.Key)
	}
	if err := s.refuseWhenFull(); err != nil { // the index write needs room
		return fmt.Errorf("rewrite %s/%s: %w", o.Bucket, o.Key, err)
	}
	unlock := s.lockKey(o.Bucket, o.Key)
	defer unlock()
	_, cur, err := s.readHead(o.Bucket, o.Key)
	if err != nil {
		return fmt.Errorf("rewrite %s/%s: %w", o.Bucket, o.Key, err)
	}
	switch {
	case from.Less(cur.Stamp):
		return fmt.Errorf("rewrite %s/%s of %v: %w", o.Bucket, o.Key, from, &meta.StaleError{Held: cur.Stamp})
	case cur.Stamp != from:
		return fmt.Errorf("rewrite %s/%s: holds %v, not %v: %w", o.Bucket, o.Key, cur.Stamp, from, meta.ErrNotFound)
	}
	if err := sameData(cur, o); err != nil {
		return fmt.Errorf("rewrite %s/%s: %w", o.Bucket, o.Key, err)
	}
	next := *o
	next.Inline = cur.Inline
	srcs, err := s.linkParts(cur)
	defer func() {
		for _, p := range srcs {
			os.Remove(p)
		}
	}()
	if err != nil {
		return fmt.Errorf("rewrite %s/%s: %w", o.Bucket, o.Key, err)
	}
	if err := s.install(&next, srcs, meta.ErrNotFound); err != nil {
		return fmt.Errorf("rewrite %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// sameData reports how next does not describe cur's data, nil if it does.
func sameData(cur, next *meta.Object) error {
	switch {
	case cur.Deleted || cur.DeleteMarker:
		return fmt.Errorf("%v is a deletion: %w", cur.Stamp, meta.ErrNotFound)
	case cur.Size != next.Size || cur.ETag != next.ETag || cur.Code != next.Code || cur.BlockSize != next.BlockSize ||
		cur.ShardIndex != next.ShardIndex || cur.Inlined != next.Inlined || cur.UploadID != next.UploadID:
		return invalid("the new record describes other data than %v", cur.Stamp)
	case !slices.EqualFunc(cur.Parts, next.Parts, func(a, b meta.Part) bool {
		return a.Number == b.Number && a.Size == b.Size && a.ETag == b.ETag
	}):
		return invalid("the new record lists other parts than %v", cur.Stamp)
	}
	return nil
}

// linkParts hard-links the shard files of cur into the staging area and
// returns their paths, in cur.Parts order (none for a record without
// data). Only links: the files stay where they are, so cur still reads
// whole if what follows fails.
func (s *Store) linkParts(cur *meta.Object) ([]string, error) {
	if !hasData(cur) {
		return nil, nil
	}
	dir := filepath.Join(s.objDir(cur.Bucket, cur.Key), dataDirName(cur.Stamp))
	var out []string
	for _, p := range cur.Parts {
		src := filepath.Join(dir, partFileName(p.Number))
		dst := s.stagedPath(uuid.NewString())
		if err := os.Link(src, dst); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				err = fmt.Errorf("part %d of %v: %w", p.Number, cur.Stamp, meta.ErrNotFound)
			}
			return out, err
		}
		out = append(out, dst)
	}
	return out, nil
}
