package gateway

import (
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"tessera/meta"
)

// maxKeyLen is S3's limit on a key's UTF-8 length.
const maxKeyLen = 1024

// validBucketName reports whether name follows S3's bucket naming rules for
// new buckets: 3-63 characters of lowercase letters, digits, hyphens and
// dots, starting and ending with a letter or digit, no "..", not an IPv4
// address, and none of the prefixes and suffixes AWS reserves.
func validBucketName(name string) bool {
	if !meta.ValidBucketName(name) || net.ParseIP(name) != nil {
		return false
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	return true
}

// checkKey validates a decoded object key.
func checkKey(key string) error {
	switch {
	case key == "":
		return apiErrf(errInvalidArgument, "The object key must not be empty.")
	case len(key) > maxKeyLen:
		return apiErr(errKeyTooLong)
	case !utf8.ValidString(key):
		return apiErrf(errInvalidArgument, "Object key is not valid UTF-8.")
	case strings.Contains(key, meta.VersionSep):
		// NUL separates a key from a version ID in stored names
		// (meta.VersionKey); a client key holding one could name another
		// key's version directly. XML cannot carry it in a listing anyway.
		return apiErrf(errInvalidArgument, "Object key must not contain the NUL character.")
	}
	return nil
}

// bucketParam returns the request's bucket, decoded once from the escaped
// path (the router matches on r.URL.EscapedPath).
func bucketParam(r *http.Request) (string, error) {
	raw := mux.Vars(r)["bucket"]
	bucket, err := url.PathUnescape(raw)
	if err != nil || !validBucketName(bucket) {
		return "", apiErr(errInvalidBucketName)
	}
	return bucket, nil
}

// objectParams returns the request's bucket and key. The key is decoded
// exactly once, so "a%2Fb" on the wire is the key "a/b" and "a%252Fb" is
// the key "a%2Fb".
func objectParams(r *http.Request) (bucket, key string, err error) {
	bucket, err = bucketParam(r)
	if err != nil {
		return "", "", err
	}
	key, err = url.PathUnescape(mux.Vars(r)["key"])
	if err != nil {
		return "", "", apiErrf(errInvalidArgument, "The object key is not correctly percent-encoded.")
	}
	if err := checkKey(key); err != nil {
		return "", "", err
	}
	// Such a key is refused for writes only: an object stored under one
	// by an earlier version can still be read and deleted.
	if dotSegmentKey(key) && writes(r) {
		return "", "", apiErr(errBadRequest400)
	}
	return bucket, key, nil
}

// writes reports a request that may create or change an object.
func writes(r *http.Request) bool {
	return r.Method == http.MethodPut || r.Method == http.MethodPost
}

// dotSegmentKey reports a key S3 refuses in a request path with a bare
// 400 Bad Request: one whose "." and ".." segments leave nothing of it
// (".", "./", "a/..", "//") or climb above the bucket ("../x",
// "a/../../x"). Keys that merely contain dot segments ("a/../b") are
// kept as they are.
func dotSegmentKey(key string) bool {
	switch path.Clean(key) {
	case ".", "/":
		return true
	}
	return climbsOut(key)
}
