package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"tessera/meta"
)

const bucketMetaName = "bucket.meta"

// requireBucket reports meta.ErrBucketNotFound unless the bucket record
// exists. Presence, not validity, is checked: it runs on every write.
func (s *Store) requireBucket(bucket string) error {
	_, err := os.Stat(filepath.Join(s.bucketDir(bucket), bucketMetaName))
	if isNotExist(err) {
		return fmt.Errorf("bucket %s: %w", bucket, meta.ErrBucketNotFound)
	}
	if err != nil {
		return ioErr("stat bucket "+bucket, err)
	}
	return nil
}

func (s *Store) readBucket(bucket string) (meta.Bucket, error) {
	var b meta.Bucket
	data, err := readFile(filepath.Join(s.bucketDir(bucket), bucketMetaName))
	if isNotExist(err) {
		return b, fmt.Errorf("bucket %s: %w", bucket, meta.ErrBucketNotFound)
	}
	if err != nil {
		return b, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if _, err := meta.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if b.Name != bucket {
		return b, fmt.Errorf("bucket %s: %w: record names %q", bucket, meta.ErrCorrupt, b.Name)
	}
	return b, nil
}

// MakeBucket creates the bucket record. It fails with meta.ErrBucketExists
// when a valid record is present; a damaged one is replaced.
func (s *Store) MakeBucket(ctx context.Context, b meta.Bucket) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if !ValidBucket(b.Name) {
		return invalid("bucket name %q", b.Name)
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	_, err = s.readBucket(b.Name)
	switch {
	case err == nil:
		return fmt.Errorf("make bucket %s: %w", b.Name, meta.ErrBucketExists)
	case errors.Is(err, meta.ErrCorrupt):
		s.log.Warn().Err(err).Str("bucket", b.Name).Msg("replacing damaged bucket record")
	case !errors.Is(err, meta.ErrBucketNotFound):
		return fmt.Errorf("make bucket: %w", err)
	}
	rec, err := meta.Marshal(&b, nil)
	if err != nil {
		return err
	}
	// A crash in DeleteBucket may have left the index entries of a bucket
	// of this name: they go before the bucket exists again.
	if err := s.dropIndexed(b.Name); err != nil {
		return fmt.Errorf("make bucket %s: %w", b.Name, err)
	}
	dir := s.bucketDir(b.Name)
	sb := s.batch()
	if err := mkdirs(s.dir, dir, sb); err != nil {
		return fmt.Errorf("make bucket %s: %w", b.Name, err)
	}
	if err := s.writeRecord(dir, bucketMetaName, rec, sb); err != nil {
		return fmt.Errorf("make bucket %s: %w", b.Name, err)
	}
	return nil
}

// StatBucket returns the bucket record: meta.ErrBucketNotFound when absent,
// an error wrapping meta.ErrCorrupt when damaged.
func (s *Store) StatBucket(ctx context.Context, bucket string) (meta.Bucket, error) {
	if err := s.check(ctx); err != nil {
		return meta.Bucket{}, err
	}
	if !ValidBucket(bucket) {
		return meta.Bucket{}, invalid("bucket name %q", bucket)
	}
	return s.readBucket(bucket)
}

// ListBuckets returns every bucket with a readable record, sorted by name.
// Damaged records are logged and left out.
func (s *Store) ListBuckets(ctx context.Context) ([]meta.Bucket, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(s.bucketsDir)
	if err != nil && !isNotExist(err) {
		return nil, ioErr("list buckets", err)
	}
	out := []meta.Bucket{}
	for _, e := range ents {
		if !ValidBucket(e.Name()) {
			continue
		}
		b, err := s.readBucket(e.Name())
		if err != nil {
			if !errors.Is(err, meta.ErrBucketNotFound) {
				s.log.Warn().Err(err).Str("bucket", e.Name()).Msg("skipping unreadable bucket")
			}
			continue
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DeleteBucket removes the bucket and everything under it (tombstones,
// damaged records, and uploads in progress with their parts, as S3 aborts
// a deleted bucket's uploads). It fails with meta.ErrBucketNotEmpty while
// the bucket holds a live object. The whole tree goes in one rename into
// the staging area, so a crash leaves either the bucket with all it held
// or no bucket; what the rename hid is wiped on the next Open. The
// bucket's index entries go after the rename, in one range deletion; a
// crash in between leaves entries of a bucket that does not exist, which
// no call reads and MakeBucket removes before making the bucket again.
func (s *Store) DeleteBucket(ctx context.Context, bucket string) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if !ValidBucket(bucket) {
		return invalid("bucket name %q", bucket)
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if err := s.requireBucket(bucket); err != nil {
		return err
	}
	live, err := s.liveExact(bucket)
	if err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	if live {
		n, _ := s.live(bucket)
		return fmt.Errorf("delete bucket %s: %d objects: %w", bucket, n, meta.ErrBucketNotEmpty)
	}
	if err := s.removeTree(s.bucketDir(bucket)); err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	if err := s.dropIndexed(bucket); err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	return nil
}

// dropIndexed removes every index entry of bucket in one synced batch.
func (s *Store) dropIndexed(bucket string) error {
	b := s.db.NewBatch()
	for _, pfx := range []byte{pfxObject, pfxKept, pfxHash, pfxTomb} {
		p := bucketPrefix(pfx, bucket)
		b.DeleteRange(p, prefixEnd(p), nil)
	}
	b.Delete(countKey(bucket), nil)
	return s.apply(b)
}
