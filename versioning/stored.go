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

// Current is the object.CurrentFunc of key in a versioned bucket: its
// latest version (the stored key and its ETag), none when that is a
// delete marker.
func Current(r Reader, bucket, key string) object.CurrentFunc {
	return func(ctx context.Context) (object.Current, bool, error) {
		objs, err := StoredVersions(ctx, r, bucket, key, 1)
		if err != nil {
			return object.Current{}, false, err
		}
		info, ok := LatestOf(objs)
		if !ok {
			return object.Current{}, false, nil
		}
		return object.Current{ETag: info.ETag, Stored: info.Key}, true, nil
	}
}
