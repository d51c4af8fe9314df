package storage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"tessera/meta"
)

// StatRecord returns the file information of the key's current record,
// meta.ErrNotFound when there is none. Every commit, repair included,
// installs a new record file by rename, so two answers that are not
// os.SameFile tell a caller holding the first that the record was
// replaced in between (the scrubber uses it to drop findings a repair or
// an overwrite made moot).
func (s *Store) StatRecord(ctx context.Context, bucket, key string) (fs.FileInfo, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, err
	}
	fi, err := os.Stat(filepath.Join(s.objDir(bucket, key), "meta"))
	if isNotExist(err) {
		return nil, fmt.Errorf("stat record %s/%s: %w", bucket, key, meta.ErrNotFound)
	}
	if err != nil {
		return nil, ioErr("stat record", err)
	}
	return fi, nil
}
