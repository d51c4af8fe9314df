package meta

import "strings"

// ValidBucketName reports whether name has the shape S3 requires of
// bucket names: 3-63 characters of [a-z0-9.-], starting and ending with a
// letter or digit, without "..". Peers rely on it for path safety; the
// gateway adds S3's reserved names on top.
func ValidBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' || c == '.':
			if i == 0 || i == len(name)-1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
