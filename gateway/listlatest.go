package gateway

import (
	"context"

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

// storedVersions is versioning.StoredVersions through the backend.
func (g *gateway) storedVersions(ctx context.Context, bucket, key string, limit int) ([]object.ObjectInfo, error) {
	return versioning.StoredVersions(ctx, g.be, bucket, key, limit)
}
