package meta

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// A versioned bucket keeps each version of a key as an object of its own
// under the version key: the key, VersionSep, then the version ID. Every
// version is thus an ordinary object to everything below the S3 layer:
// it has its own record and shards on its peers, read and written under
// the same quorum, repaired, scrubbed, moved and collected like any other,
// so nothing about faults is weaker for a versioned bucket. The null
// version (an object written while versioning was off or suspended) is
// the plain key.
//
// VersionSep, the smallest byte, sorts a key's versions right after the
// key and before any longer key, and the ID sorts the newest version
// first, so that one seek finds a key's latest version and a listing
// meets every version of a key together. Placement uses the key alone
// (PlacementKey), so all versions of a key live on the same peers.
const VersionSep = "\x00"

// VersionIDLen is the length of a version ID: 16 hex digits of the
// inverted write time, newest first, then 8 random hex digits that keep
// two writes in the same nanosecond apart.
const VersionIDLen = 24

// NewVersionID returns a version ID for a version written at nanos (a
// Unix time in nanoseconds). IDs of later writes sort first.
func NewVersionID(nanos int64) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(math.MaxInt64-nanos))
	if _, err := rand.Read(b[8:]); err != nil {
		panic("meta: no randomness for a version ID: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// ValidVersionID reports whether id has the form NewVersionID makes.
func ValidVersionID(id string) bool {
	if len(id) != VersionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// VersionNanos returns the write time encoded in a valid version ID.
func VersionNanos(id string) int64 {
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(id[:16])); err != nil {
		return 0
	}
	return math.MaxInt64 - int64(binary.BigEndian.Uint64(b[:]))
}

// VersionKey returns the key under which version id of key is stored.
func VersionKey(key, id string) string { return key + VersionSep + id }

// SplitVersion splits a stored key into its object key and version ID;
// ok is false for a plain key (a null version or an unversioned object).
func SplitVersion(stored string) (key, id string, ok bool) {
	i := len(stored) - VersionIDLen - len(VersionSep)
	if i <= 0 || stored[i:i+len(VersionSep)] != VersionSep || !ValidVersionID(stored[i+len(VersionSep):]) {
		return stored, "", false
	}
	return stored[:i], stored[i+len(VersionSep):], true
}

// PlacementKey is the key that places a stored key on the ring: its
// object key, so that every version of a key lives on the same peers.
func PlacementKey(stored string) string {
	key, _, _ := SplitVersion(stored)
	return key
}

// VersionPrefix is the prefix every version key of key starts with.
func VersionPrefix(key string) string { return key + VersionSep }
