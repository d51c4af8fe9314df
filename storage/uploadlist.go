package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tessera/meta"
)

// ListUploads returns the records (without parts) of the multipart uploads
// in progress in bucket whose key starts with prefix, sorted by key, then
// initiation time. Unreadable records are skipped: an upload half-created
// or half-aborted by a crash is not one a client can continue.
func (s *Store) ListUploads(ctx context.Context, bucket, prefix string) ([]meta.Upload, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if !ValidBucket(bucket) {
		return nil, invalid("bucket name")
	}
	if err := s.requireBucket(bucket); err != nil {
		return nil, err
	}
	root := s.uploadsDir(bucket)
	hashes, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list uploads of %s: %w", bucket, err)
	}
	var out []meta.Upload
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ids, err := os.ReadDir(filepath.Join(root, h.Name()))
		if err != nil {
			continue
		}
		for _, id := range ids {
			data, err := readFile(filepath.Join(root, h.Name(), id.Name(), uploadMetaName))
			if err != nil {
				continue
			}
			var u meta.Upload
			if _, err := meta.Unmarshal(data, &u); err != nil || !strings.HasPrefix(u.Key, prefix) {
				continue
			}
			u.Parts = nil
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Initiated.Before(out[j].Initiated)
	})
	return out, nil
}
