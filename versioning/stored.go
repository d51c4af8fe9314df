package versioning

import (
	"context"
	"errors"

	"tessera/meta"
	"tessera/object"
)

// Reader is what finding one key's versions needs of the object layer.
type Reader interface {
	Lister
	HeadObject(ctx context.Context, bucket, key string) (object.ObjectInfo, error)
}

// StoredVersions is the stored objects of key: its null version, if any,
// then its version keys in listing order, the newest limit of them (0:
// all).
func StoredVersions(ctx context.Context, r Reader, bucket, key string, limit int) ([]object.ObjectInfo, error) {
	var out []object.ObjectInfo
	info, err := r.HeadObject(ctx, bucket, key)
	switch {
	case err == nil:
		out = append(out, info)
	case !errors.Is(err, object.ErrObjectNotFound):
		return nil, err
	}
	pageSize := object.DefaultMaxKeys
	if limit > 0 {
		pageSize = limit
	}
	for after := ""; ; {
		page, err := r.ListObjects(ctx, bucket, object.ListOptions{Prefix: meta.VersionPrefix(key), After: after, MaxKeys: pageSize})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Objects...)
		if !page.IsTruncated || limit > 0 {
			return out, nil
		}
		after = page.NextAfter
	}
}

// Current is the object.CurrentFunc of key in a versioned bucket: the
// ETag of its latest version, none when that is a delete marker.
func Current(r Reader, bucket, key string) object.CurrentFunc {
	return func(ctx context.Context) (string, bool, error) {
		objs, err := StoredVersions(ctx, r, bucket, key, 1)
		if err != nil {
			return "", false, err
		}
		info, ok := LatestOf(objs)
		return info.ETag, ok, nil
	}
}

// StillLatest is an object.CurrentFunc for a write meant only while
// storedKey is key's latest version, with IfMatch its ETag: it reports
// that ETag while storedKey is the latest, no current version when the
// latest is a delete marker (If-Match then fails as on a missing key),
// and otherwise a current version with an empty ETag, which no If-Match
// names. So a newer version with the same bytes (and ETag) still stops
// the write, which an ETag alone would not.
func StillLatest(r Reader, bucket, key, storedKey string) object.CurrentFunc {
	return func(ctx context.Context) (string, bool, error) {
		objs, err := StoredVersions(ctx, r, bucket, key, 1)
		if err != nil {
			return "", false, err
		}
		info, ok := LatestOf(objs)
		if !ok {
			return "", false, nil
		}
		if info.Key != storedKey {
			return "", true, nil
		}
		return info.ETag, true, nil
	}
}
