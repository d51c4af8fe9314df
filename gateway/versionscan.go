package gateway

import (
	"context"
	"errors"
	"strings"

	"tessera/meta"
	"tessera/object"
	"tessera/versioning"
)

// Listings of a versioned bucket read the stored objects in key order,
// where each key's null version (the plain key) comes first and its
// version keys follow, newest first (package versioning), and group them
// by key.

// keyGroup is one line of a grouped listing: a key with its stored
// objects in listing order, or a common prefix.
type keyGroup struct {
	key    string
	stored []object.ObjectInfo
	prefix string // set for a common prefix, which has no stored objects
}

func (k keyGroup) name() string {
	if k.prefix != "" {
		return k.prefix
	}
	return k.key
}

// groupScan is a grouped listing of one bucket.
type groupScan struct {
	bucket, prefix, delimiter string
	// after: only lines whose name (key or common prefix) is greater.
	after string
}

// peerDelimiter is the delimiter the peers can fold on: one that can
// only match within the key part of a version key. A delimiter holding
// NUL, or made only of the digits a version ID is written in, could match
// inside the version suffix, so the gateway folds it itself.
func peerDelimiter(d string) string {
	if strings.ContainsRune(d, 0) || strings.Trim(d, "0123456789abcdef") == "" {
		return ""
	}
	return d
}

// run calls yield for each line in order until it returns false or the
// listing ends.
func (s groupScan) run(ctx context.Context, be Backend, yield func(keyGroup) bool) error {
	var cur keyGroup
	open := false
	flush := func() bool {
		if !open {
			return true
		}
		open = false
		return cur.name() <= s.after || yield(cur)
	}
	pd := peerDelimiter(s.delimiter)
	after := s.after
	for {
		page, err := be.ListObjects(ctx, s.bucket, object.ListOptions{Prefix: s.prefix, Delimiter: pd, After: after, MaxKeys: object.DefaultMaxKeys})
		if err != nil {
			return err
		}
		more := true
		mergeListing(page, func(o *object.ObjectInfo, prefix string) bool {
			if o != nil {
				prefix = s.fold(meta.PlacementKey(o.Key))
			}
			switch {
			case prefix != "" && open && cur.prefix == prefix:
				return true
			case prefix != "":
				if more = flush(); !more {
					return false
				}
				cur, open = keyGroup{prefix: prefix}, true
			case open && cur.prefix == "" && cur.key == meta.PlacementKey(o.Key):
				cur.stored = append(cur.stored, *o)
			default:
				if more = flush(); !more {
					return false
				}
				cur, open = keyGroup{key: meta.PlacementKey(o.Key), stored: []object.ObjectInfo{*o}}, true
			}
			return true
		})
		if !more {
			return nil
		}
		if !page.IsTruncated {
			flush()
			return nil
		}
		after = page.NextAfter
	}
}

// fold is the common prefix key falls under when the gateway folds the
// delimiter itself, "" when it does not fold it.
func (s groupScan) fold(key string) string {
	if s.delimiter == "" || peerDelimiter(s.delimiter) != "" {
		return ""
	}
	i := strings.Index(key[len(s.prefix):], s.delimiter)
	if i < 0 {
		return ""
	}
	return key[:len(s.prefix)+i+len(s.delimiter)]
}

// mergeListing calls f with a page's objects and common prefixes in key
// order until it returns false.
func mergeListing(page object.ListResult, f func(o *object.ObjectInfo, prefix string) bool) {
	objs, prefixes := page.Objects, page.Prefixes
	for len(objs) > 0 || len(prefixes) > 0 {
		var ok bool
		if len(prefixes) == 0 || (len(objs) > 0 && objs[0].Key < prefixes[0]) {
			ok = f(&objs[0], "")
			objs = objs[1:]
		} else {
			ok = f(nil, prefixes[0])
			prefixes = prefixes[1:]
		}
		if !ok {
			return
		}
	}
}

// storedOfGroup is the versioning view of a key's stored objects.
func storedOfGroup(objs []object.ObjectInfo) []versioning.Stored {
	out := make([]versioning.Stored, len(objs))
	for i, o := range objs {
		out[i] = *storedOf(o)
	}
	return out
}

// latestOf is the key's latest version among its stored objects, false
// when it has none or the latest is a delete marker.
func latestOf(objs []object.ObjectInfo) (object.ObjectInfo, bool) {
	var plain, first *versioning.Stored
	var plainInfo, firstInfo object.ObjectInfo
	for _, o := range objs {
		if _, _, ok := meta.SplitVersion(o.Key); !ok {
			plain, plainInfo = storedOf(o), o
		} else if first == nil {
			first, firstInfo = storedOf(o), o
		}
	}
	s, ok := versioning.Latest(plain, first)
	if !ok || s.DeleteMarker {
		return object.ObjectInfo{}, false
	}
	if s.StoredKey == plainInfo.Key && plain != nil {
		return plainInfo, true
	}
	return firstInfo, true
}

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
	scan := groupScan{bucket: p.bucket, prefix: p.prefix, delimiter: p.delimiter, after: p.after}
	err := scan.run(ctx, g.be, func(k keyGroup) bool {
		var info object.ObjectInfo
		if k.prefix == "" {
			var ok bool
			if info, ok = latestOf(k.stored); !ok {
				return true
			}
			info.Key = k.key
		}
		if n == max {
			res.IsTruncated = true
			return false
		}
		n++
		if k.prefix != "" {
			res.Prefixes = append(res.Prefixes, k.prefix)
		} else {
			res.Objects = append(res.Objects, info)
		}
		res.NextAfter = k.name()
		return true
	})
	if !res.IsTruncated {
		res.NextAfter = ""
	}
	return res, err
}

// storedVersions is every stored object of key: its null version, if
// any, then its version keys in listing order.
func (g *gateway) storedVersions(ctx context.Context, bucket, key string) ([]object.ObjectInfo, error) {
	var out []object.ObjectInfo
	info, err := g.be.HeadObject(ctx, bucket, key)
	switch {
	case err == nil:
		out = append(out, info)
	case !errors.Is(err, object.ErrObjectNotFound):
		return nil, err
	}
	for after := ""; ; {
		page, err := g.be.ListObjects(ctx, bucket, object.ListOptions{Prefix: meta.VersionPrefix(key), After: after, MaxKeys: object.DefaultMaxKeys})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Objects...)
		if !page.IsTruncated {
			return out, nil
		}
		after = page.NextAfter
	}
}
