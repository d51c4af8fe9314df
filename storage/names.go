package storage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"tessera/meta"
)

// Limits on names. Keys are never used as paths, so only length and UTF-8
// validity matter (the record codec is JSON, which would rewrite invalid
// UTF-8 and make the stored key differ from the requested one).
const (
	MaxKeyLen      = 1024
	MaxUploadIDLen = 128
	MaxWriterLen   = 128
	MaxPartNumber  = 10000
)

// ValidBucket reports whether name is a bucket name this store accepts;
// names become path components, so only meta.ValidBucketName's shape will do.
func ValidBucket(name string) bool { return meta.ValidBucketName(name) }

// ValidKey reports whether key is a storable object key: an S3 key of
// up to MaxKeyLen bytes, or a version key of one (meta.VersionKey).
func ValidKey(key string) bool {
	k := meta.PlacementKey(key)
	return len(k) >= 1 && len(k) <= MaxKeyLen && utf8.ValidString(key)
}

// ValidUploadID reports whether id is a usable upload ID: 1-128 URL
// unreserved characters [A-Za-z0-9._~-], not starting with '.'.
func ValidUploadID(id string) bool {
	if len(id) < 1 || len(id) > MaxUploadIDLen || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '~' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// validTmpID accepts only the canonical UUIDs StageShard hands out.
func validTmpID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

func validStamp(st meta.Stamp) bool {
	return st.Nanos > 0 && len(st.Writer) <= MaxWriterLen && utf8.ValidString(st.Writer)
}

func checkBucketKey(bucket, key string) error {
	if !ValidBucket(bucket) {
		return invalid("bucket name %q", bucket)
	}
	if !ValidKey(key) {
		return invalid("key of %d bytes", len(key))
	}
	return nil
}

func checkUpload(bucket, key, uploadID string) error {
	if err := checkBucketKey(bucket, key); err != nil {
		return err
	}
	if !ValidUploadID(uploadID) {
		return invalid("upload id %q", uploadID)
	}
	return nil
}

// checkParts accepts part numbers in [1, MaxPartNumber], each at most once.
func checkParts(parts []meta.Part) error {
	seen := make(map[int]bool, len(parts))
	for _, p := range parts {
		if p.Number < 1 || p.Number > MaxPartNumber || seen[p.Number] || p.Size < 0 {
			return invalid("part %d (size %d)", p.Number, p.Size)
		}
		seen[p.Number] = true
	}
	return nil
}

func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// dataDirName names the data dir of a version. Stamp.String is readable but
// not injective (it maps unsafe writer bytes to '_'), so a hash of the raw
// writer keeps two versions from ever sharing a dir.
func dataDirName(st meta.Stamp) string {
	sum := sha256.Sum256([]byte(st.Writer))
	return fmt.Sprintf("%s-%016x", st.String(), binary.BigEndian.Uint64(sum[:8]))
}

func partFileName(n int) string { return fmt.Sprintf("part.%d", n) }

func partMetaName(n int) string { return fmt.Sprintf("part.%d.meta", n) }

// parsePartMetaName returns N for a "part.N.meta" name.
func parsePartMetaName(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "part.")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".meta")
	if !ok || len(s) == 0 || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n >= 1 && n <= MaxPartNumber && s == fmt.Sprint(n)
}
