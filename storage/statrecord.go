package storage

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"tessera/meta"
)

// StatRecord returns a description of the key's current record,
// meta.ErrNotFound when there is none. Every commit, repair and relabel
// included, writes the record under a new generation, which the answer's
// Sys() holds (a RecordGen): two answers with different generations tell
// a caller holding the first that the record was replaced in between
// (the scrubber uses it to drop findings a repair or an overwrite made
// moot). SameRecord compares two answers.
func (s *Store) StatRecord(ctx context.Context, bucket, key string) (fs.FileInfo, error) {
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, err
	}
	v, err := s.get(objKey(bucket, key))
	if err != nil {
		return nil, fmt.Errorf("stat record %s/%s: %w", bucket, key, err)
	}
	if v == nil {
		return nil, fmt.Errorf("stat record %s/%s: %w", bucket, key, meta.ErrNotFound)
	}
	// A damaged record is still a record, with the generation it was
	// written under (damage to that only makes it differ from the next).
	return recordInfo{name: key, size: int64(len(v)), gen: RecordGen(recordGen(v))}, nil
}

// RecordGen numbers the writes of a store's records (StatRecord).
type RecordGen uint64

// Generation returns g, so that callers compare generations through an
// interface without importing this package.
func (g RecordGen) Generation() uint64 { return uint64(g) }

// SameRecord reports whether two StatRecord answers describe the same
// write of a record.
func SameRecord(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return false
	}
	ga, ok := a.Sys().(RecordGen)
	gb, ok2 := b.Sys().(RecordGen)
	return ok && ok2 && ga == gb && ga != 0
}

type recordInfo struct {
	name string
	size int64
	gen  RecordGen
}

func (r recordInfo) Name() string       { return r.name }
func (r recordInfo) Size() int64        { return r.size }
func (r recordInfo) Mode() fs.FileMode  { return 0o444 }
func (r recordInfo) ModTime() time.Time { return time.Time{} }
func (r recordInfo) IsDir() bool        { return false }
func (r recordInfo) Sys() any           { return r.gen }
