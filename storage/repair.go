package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"tessera/meta"
)

// RepairCommit is Commit for repair: it also accepts a record whose stamp
// equals the current one, rewriting this peer's copy of that version (a
// shard file lost or failing its checksums) with freshly rebuilt data. A
// newer current record still wins (meta.ErrStale, nothing changes), so a
// repair racing an overwrite can never bring the old version back.
func (s *Store) RepairCommit(ctx context.Context, o *meta.Object, staged []string) error {
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
	err := s.installIf(o, srcs, ErrStagedNotFound, true)
	if err == nil || errors.Is(err, meta.ErrStale) {
		for _, p := range srcs {
			os.Remove(p)
		}
	}
	if err != nil {
		return fmt.Errorf("repair commit %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// ShardFile is one part file of a stored version, as Inspect reports it.
type ShardFile struct {
	Part int
	Size int64 // -1 when the file is missing
}

// Inspect reads, without opening a Store, the record a peer directory
// holds for bucket/key and the sizes of its part files. It only reads, so
// it is safe on the directory of a running peer; tools and tests use it
// to check redundancy from outside. A missing record is meta.ErrNotFound.
func Inspect(dir, bucket, key string) (*meta.Object, []ShardFile, error) {
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, nil, err
	}
	h := keyHash(key)
	objDir := filepath.Join(dir, "buckets", bucket, "obj", h[:2], h)
	o, err := readObjectFile(bucket, filepath.Join(objDir, "meta"))
	if isNotExist(err) {
		return nil, nil, fmt.Errorf("inspect %s/%s: %w", bucket, key, meta.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("inspect %s/%s: %w", bucket, key, err)
	}
	if !hasData(o) {
		return o, nil, nil
	}
	files := make([]ShardFile, 0, len(o.Parts))
	for _, p := range o.Parts {
		f := ShardFile{Part: p.Number, Size: -1}
		if fi, err := os.Stat(filepath.Join(objDir, dataDirName(o.Stamp), partFileName(p.Number))); err == nil {
			f.Size = fi.Size()
		}
		files = append(files, f)
	}
	return o, files, nil
}
