package versioning

import (
	"context"
	"strings"

	"tessera/meta"
	"tessera/object"
)

// Listings of a versioned bucket read the stored objects in key order,
// where each key's null version (the plain key) comes first and its
// version keys follow, newest first, and group them by key.

// Lister is the object layer's listing.
type Lister interface {
	ListObjects(ctx context.Context, bucket string, opts object.ListOptions) (object.ListResult, error)
}

// Group is one line of a grouped listing: a key with its stored objects
// in listing order, or a common prefix.
type Group struct {
	Key    string
	Stored []object.ObjectInfo
	Prefix string // set for a common prefix, which has no stored objects
}

// Name is the group's key or common prefix.
func (k Group) Name() string {
	if k.Prefix != "" {
		return k.Prefix
	}
	return k.Key
}

// Scan is a grouped listing of one bucket.
type Scan struct {
	Bucket, Prefix, Delimiter string
	// After: only lines whose name (key or common prefix) is greater.
	After string
}

// peerDelimiter is the delimiter the peers can fold on: one that can
// only match within the key part of a version key. A delimiter holding
// NUL, or made only of the digits a version ID is written in, could match
// inside the version suffix, so the scan folds it itself.
func peerDelimiter(d string) string {
	if strings.ContainsRune(d, 0) || strings.Trim(d, "0123456789abcdef") == "" {
		return ""
	}
	return d
}

// Run calls yield for each line in order until it returns false or the
// listing ends.
func (s Scan) Run(ctx context.Context, l Lister, yield func(Group) bool) error {
	var cur Group
	open := false
	flush := func() bool {
		if !open {
			return true
		}
		open = false
		return cur.Name() <= s.After || yield(cur)
	}
	pd := peerDelimiter(s.Delimiter)
	after := s.After
	for {
		page, err := l.ListObjects(ctx, s.Bucket, object.ListOptions{Prefix: s.Prefix, Delimiter: pd, After: after, MaxKeys: object.DefaultMaxKeys})
		if err != nil {
			return err
		}
		more := true
		mergeListing(page, func(o *object.ObjectInfo, prefix string) bool {
			if o != nil {
				prefix = s.fold(meta.PlacementKey(o.Key))
			}
			switch {
			case prefix != "" && open && cur.Prefix == prefix:
				return true
			case prefix != "":
				if more = flush(); !more {
					return false
				}
				cur, open = Group{Prefix: prefix}, true
			case open && cur.Prefix == "" && cur.Key == meta.PlacementKey(o.Key):
				cur.Stored = append(cur.Stored, *o)
			default:
				if more = flush(); !more {
					return false
				}
				cur, open = Group{Key: meta.PlacementKey(o.Key), Stored: []object.ObjectInfo{*o}}, true
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

// fold is the common prefix key falls under when the scan folds the
// delimiter itself, "" when it does not fold it.
func (s Scan) fold(key string) string {
	if s.Delimiter == "" || peerDelimiter(s.Delimiter) != "" {
		return ""
	}
	i := strings.Index(key[len(s.Prefix):], s.Delimiter)
	if i < 0 {
		return ""
	}
	return key[:len(s.Prefix)+i+len(s.Delimiter)]
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

// StoredOf is the versioning view of one stored object.
func StoredOf(o object.ObjectInfo) Stored {
	return Stored{StoredKey: o.Key, ModTime: o.ModTime, DeleteMarker: o.DeleteMarker}
}

// Versions orders a key's stored objects (listing order) as S3 lists its
// versions, each with its stored object.
func Versions(objs []object.ObjectInfo) ([]Version, map[string]object.ObjectInfo) {
	byKey := make(map[string]object.ObjectInfo, len(objs))
	stored := make([]Stored, len(objs))
	for i, o := range objs {
		byKey[o.Key] = o
		stored[i] = StoredOf(o)
	}
	return Order(stored), byKey
}

// LatestOf is the key's latest version among its stored objects, false
// when it has none or the latest is a delete marker.
func LatestOf(objs []object.ObjectInfo) (object.ObjectInfo, bool) {
	vs, byKey := Versions(objs)
	if len(vs) == 0 || vs[0].DeleteMarker {
		return object.ObjectInfo{}, false
	}
	return byKey[vs[0].StoredKey], true
}
