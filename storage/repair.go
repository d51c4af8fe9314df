package storage

import (
	"context"
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
	return s.commitStaged(ctx, "repair commit", o, staged, true)
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
