package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"tessera/meta"
)

// maxBucketConfig bounds one configuration document (S3 caps a CORS
// configuration at 64 KiB).
const maxBucketConfig = 64 << 10

// validConfigName accepts the sub-resource names a bucket config may carry:
// short lowercase words, so the name is safe as part of a file name.
func validConfigName(name string) bool {
	if name == "" || len(name) > 32 {
		return false
	}
	for _, c := range name {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func configFileName(name string) string { return "config-" + name + ".meta" }

// PutBucketConfig stores c unless the peer already holds a newer record
// for the same configuration (last writer by Updated wins; equal times
// keep the incoming record). The bucket must exist.
func (s *Store) PutBucketConfig(ctx context.Context, c meta.BucketConfig) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if !ValidBucket(c.Bucket) || !validConfigName(c.Name) {
		return invalid("bucket config %q/%q", c.Bucket, c.Name)
	}
	if len(c.Data) > maxBucketConfig {
		return invalid("bucket config %s/%s is %d bytes", c.Bucket, c.Name, len(c.Data))
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if err := s.requireBucket(c.Bucket); err != nil {
		return err
	}
	old, err := s.readBucketConfig(c.Bucket, c.Name)
	switch {
	case err == nil && old.Updated.After(c.Updated):
		return nil
	case err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrCorrupt):
		return fmt.Errorf("put bucket config: %w", err)
	}
	rec, err := meta.Marshal(&c, nil)
	if err != nil {
		return err
	}
	if err := s.writeRecord(s.bucketDir(c.Bucket), configFileName(c.Name), rec, nil); err != nil {
		return fmt.Errorf("put bucket config %s/%s: %w", c.Bucket, c.Name, err)
	}
	return nil
}

// GetBucketConfig returns the stored record, which may be a delete marker
// (empty Data): meta.ErrNotFound when none was ever written,
// meta.ErrBucketNotFound when the bucket is absent.
func (s *Store) GetBucketConfig(ctx context.Context, bucket, name string) (meta.BucketConfig, error) {
	if err := s.check(ctx); err != nil {
		return meta.BucketConfig{}, err
	}
	if !ValidBucket(bucket) || !validConfigName(name) {
		return meta.BucketConfig{}, invalid("bucket config %q/%q", bucket, name)
	}
	if err := s.requireBucket(bucket); err != nil {
		return meta.BucketConfig{}, err
	}
	return s.readBucketConfig(bucket, name)
}

func (s *Store) readBucketConfig(bucket, name string) (meta.BucketConfig, error) {
	var c meta.BucketConfig
	data, err := readFile(filepath.Join(s.bucketDir(bucket), configFileName(name)))
	if isNotExist(err) {
		return c, fmt.Errorf("bucket config %s/%s: %w", bucket, name, meta.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("bucket config %s/%s: %w", bucket, name, err)
	}
	if _, err := meta.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("bucket config %s/%s: %w", bucket, name, err)
	}
	if c.Bucket != bucket || c.Name != name {
		return c, fmt.Errorf("bucket config %s/%s: %w: record names %q/%q", bucket, name, meta.ErrCorrupt, c.Bucket, c.Name)
	}
	return c, nil
}
