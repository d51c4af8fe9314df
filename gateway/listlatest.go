package gateway

import (
	"context"
	"errors"

	"tessera/meta"
	"tessera/object"
	"tessera/versioning"
)

// listLatest is ListObjects over a bucket that was ever versioned: each
// key's latest version, under its key, keys whose latest version is a
// delete marker left out.
func (g *gateway) listLatest(ctx context.Context, p listRequest) (object.ListResult, error) {
	var res object.ListResult
	max := p.maxKeys
	if max < 0 || max > object.DefaultMaxKeys {
		max = object.DefaultMaxKeys
	}
	n := 0
	scan := versioning.Scan{Bucket: p.bucket, Prefix: p.prefix, Delimiter: p.delimiter, After: p.after}
	err := scan.Run(ctx, g.be, func(k versioning.Group) bool {
		var info object.ObjectInfo
		if k.Prefix == "" {
			var ok bool
			if info, ok = versioning.LatestOf(k.Stored); !ok {
				return true
			}
			info.Key = k.Key
		}
		if n == max {
			res.IsTruncated = true
			return false
		}
		n++
		if k.Prefix != "" {
			res.Prefixes = append(res.Prefixes, k.Prefix)
		} else {
			res.Objects = append(res.Objects, info)
		}
		res.NextAfter = k.Name()
		return true
	})
	if !res.IsTruncated {
		res.NextAfter = ""
	}
	return res, err
}

// storedVersions is the stored objects of key: its null version, if any,
// then its version keys in listing order, the newest limit of them (0:
// all).
func (g *gateway) storedVersions(ctx context.Context, bucket, key string, limit int) ([]object.ObjectInfo, error) {
	var out []object.ObjectInfo
	info, err := g.be.HeadObject(ctx, bucket, key)
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
		page, err := g.be.ListObjects(ctx, bucket, object.ListOptions{Prefix: meta.VersionPrefix(key), After: after, MaxKeys: pageSize})
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
