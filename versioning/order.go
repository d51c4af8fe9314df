package versioning

import (
	"time"

	"tessera/meta"
)

// NullVersionID is the version ID S3 gives the null version.
const NullVersionID = "null"

// Stored is one stored object of a key as a listing line shows it: the
// plain key (the null version) or a version key.
type Stored struct {
	StoredKey    string
	ModTime      time.Time
	DeleteMarker bool
}

// Version is one S3 version of a key.
type Version struct {
	Stored
	Key      string // the object key
	ID       string // the version ID, NullVersionID for the null version
	IsLatest bool
}

// Order returns the versions of one key in S3's order, newest first, the
// newest marked IsLatest. stored holds the key's stored objects in
// listing order: the plain key first if there is a null version, then
// the version keys, which sort newest first already. The null version
// takes its place by time: it was written when versioning was off or
// suspended, so it is newer than the versions whose IDs are older than
// its write.
func Order(stored []Stored) []Version {
	var null *Stored
	out := make([]Version, 0, len(stored))
	for i := range stored {
		key, id, ok := meta.SplitVersion(stored[i].StoredKey)
		if !ok {
			null = &stored[i]
			continue
		}
		if null != nil && newerThan(*null, id) {
			out = append(out, nullVersion(*null))
			null = nil
		}
		out = append(out, Version{Stored: stored[i], Key: key, ID: id})
	}
	if null != nil {
		out = append(out, nullVersion(*null))
	}
	if len(out) > 0 {
		out[0].IsLatest = true
	}
	return out
}

// Latest returns which of a key's null version (plain, when there is one)
// and its newest version key (first, when there is one) is its latest
// version: false for neither.
func Latest(plain, first *Stored) (Stored, bool) {
	switch {
	case plain == nil && first == nil:
		return Stored{}, false
	case first == nil:
		return *plain, true
	case plain == nil:
		return *first, true
	}
	if _, id, ok := meta.SplitVersion(first.StoredKey); ok && newerThan(*plain, id) {
		return *plain, true
	}
	return *first, true
}

// newerThan reports whether the null version s was written after the
// version with ID id.
func newerThan(s Stored, id string) bool { return s.ModTime.UnixNano() > meta.VersionNanos(id) }

func nullVersion(s Stored) Version {
	return Version{Stored: s, Key: s.StoredKey, ID: NullVersionID}
}
