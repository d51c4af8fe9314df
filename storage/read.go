package storage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"tessera/meta"
)

// readObjectFile reads and verifies an object record. A record naming
// another bucket or a key whose hash differs is as damaged as a bad checksum.
func readObjectFile(bucket, path string) (*meta.Object, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	o, err := meta.UnmarshalObject(b)
	if err != nil {
		return nil, fmt.Errorf("object record %s: %w", path, err)
	}
	if o.Bucket != bucket || !ValidKey(o.Key) || !validStamp(o.Stamp) {
		return nil, fmt.Errorf("%w: record %s names bucket %q", meta.ErrCorrupt, path, o.Bucket)
	}
	return o, nil
}

// readObject returns the current record of a key: meta.ErrNotFound when
// there is none, an error wrapping meta.ErrCorrupt when it is damaged.
func (s *Store) readObject(bucket, key string) (*meta.Object, error) {
	_, o, err := s.readRecord(bucket, key)
	return o, err
}

// ReadMeta returns the key's record, tombstones included, with Inline
// filled for inlined objects. It fails with meta.ErrNotFound when the peer
// holds no record and with an error wrapping meta.ErrCorrupt when the record
// is damaged (callers treat that copy as missing).
func (s *Store) ReadMeta(ctx context.Context, bucket, key string) (*meta.Object, error) {
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, err
	}
	return s.readObject(bucket, key)
}

// OpenShard opens the shard file of part number part of version stamp and
// returns a reader of length bytes from offset (length < 0: to the end)
// and the number of bytes it will yield. A missing file is meta.ErrNotFound;
// a file shorter than the requested range is meta.ErrCorrupt, because shard
// sizes follow from the record and a short file has been truncated.
// The file stays readable even if a newer commit removes it meanwhile.
func (s *Store) OpenShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, int64, error) {
	if err := s.check(ctx); err != nil {
		return nil, 0, err
	}
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, 0, err
	}
	if !validStamp(stamp) || part < 1 || part > MaxPartNumber || offset < 0 {
		return nil, 0, invalid("shard stamp %v part %d offset %d", stamp, part, offset)
	}
	path := filepath.Join(s.objDir(bucket, key), dataDirName(stamp), partFileName(part))
	f, err := os.Open(path)
	if isNotExist(err) {
		return nil, 0, fmt.Errorf("open shard %s/%s part %d: %w", bucket, key, part, meta.ErrNotFound)
	}
	if err != nil {
		return nil, 0, ioErr("open shard", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("open shard %s/%s part %d: %w: not a readable file", bucket, key, part, meta.ErrCorrupt)
	}
	size := fi.Size()
	if length < 0 {
		length = size - offset
	}
	if offset > size || length > size-offset {
		f.Close()
		return nil, 0, fmt.Errorf("open shard %s/%s part %d: %w: %d bytes, want %d at %d",
			bucket, key, part, meta.ErrCorrupt, size, length, offset)
	}
	return &shardReader{SectionReader: io.NewSectionReader(f, offset, length), f: f}, length, nil
}

// ReadShard is OpenShard without the length, so that a Store can stand in
// for a remote peer wherever an object.ShardClient is wanted (in-process
// peers, tests).
func (s *Store) ReadShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, error) {
	rc, _, err := s.OpenShard(ctx, bucket, key, stamp, part, offset, length)
	return rc, err
}

type shardReader struct {
	*io.SectionReader
	f *os.File
}

func (r *shardReader) Close() error { return r.f.Close() }

// List returns up to limit entries (DefaultListLimit when limit <= 0, at
// most MaxListLimit) with key > after and the given prefix, sorted by key,
// tombstones included. It iterates the index from the first key it can
// return: its cost follows the entries returned, not the bucket's size.
// With a delimiter it folds each common prefix as meta.FoldEntries does,
// seeking past the keys under it.
func (s *Store) List(ctx context.Context, bucket, prefix, after string, limit int, delimiter string) ([]meta.Entry, error) {
	leave, err := s.enterBucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	defer leave()
	if delimiter == "" {
		return s.list(bucket, prefix, after, limit)
	}
	c, err := s.openCursor(bucket, prefix, false)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var serr error
	scan := func(after string, n int) []meta.Entry {
		es, err := c.scan(after, n)
		if err != nil && serr == nil {
			serr = err
		}
		return es
	}
	es := meta.FoldEntries(scan, prefix, delimiter, after, listLimit(limit))
	if serr != nil {
		return nil, serr
	}
	return es, nil
}

// enterBucket is enter for a call on an existing bucket.
func (s *Store) enterBucket(ctx context.Context, bucket string) (leave func(), err error) {
	if !ValidBucket(bucket) {
		return nil, invalid("bucket name %q", bucket)
	}
	if leave, err = s.enter(ctx); err != nil {
		return nil, err
	}
	if err := s.requireBucket(bucket); err != nil {
		leave()
		return nil, err
	}
	return leave, nil
}

// ListRecords is List without a prefix for the scrubber, which must also
// find the records that no longer read: a damaged record is returned as
// an Entry holding only its key (zero stamp), so that the scrubber's
// ReadMeta reports it (meta.ErrCorrupt) and repair can rewrite it. List
// leaves damaged records out, since a listing shows them to clients.
func (s *Store) ListRecords(ctx context.Context, bucket, after string, limit int) ([]meta.Entry, error) {
	leave, err := s.enterBucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	defer leave()
	return s.listWith(bucket, "", after, limit, true)
}
