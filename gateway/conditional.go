package gateway

import (
	"net/http"
	"strings"
	"time"

	"tessera/object"
)

// preconditions are a request's conditional headers. Absent headers are
// empty strings or zero times; unparseable dates count as absent (RFC 9110).
type preconditions struct {
	ifMatch           string
	ifNoneMatch       string
	ifModifiedSince   time.Time
	ifUnmodifiedSince time.Time
}

// readPreconditions reads If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since, each name preceded by prefix ("" for GET and HEAD,
// "X-Amz-Copy-Source-" for a copy's source).
func readPreconditions(h http.Header, prefix string) preconditions {
	p := preconditions{
		ifMatch:     h.Get(prefix + "If-Match"),
		ifNoneMatch: h.Get(prefix + "If-None-Match"),
	}
	if t, err := http.ParseTime(h.Get(prefix + "If-Modified-Since")); err == nil {
		p.ifModifiedSince = t
	}
	if t, err := http.ParseTime(h.Get(prefix + "If-Unmodified-Since")); err == nil {
		p.ifUnmodifiedSince = t
	}
	return p
}

func (p preconditions) present() bool {
	return p.ifMatch != "" || p.ifNoneMatch != "" || !p.ifModifiedSince.IsZero() || !p.ifUnmodifiedSince.IsZero()
}

// check evaluates the conditions against info in RFC 9110 order, which is
// also S3's: If-Match outranks If-Unmodified-Since, If-None-Match outranks
// If-Modified-Since. It returns a PreconditionFailed or NotModified error,
// or nil to proceed.
func (p preconditions) check(info object.ObjectInfo) error {
	mod := info.ModTime.UTC().Truncate(time.Second)
	switch {
	case p.ifMatch != "":
		if !etagMatches(p.ifMatch, info.ETag) {
			return apiErr(errPreconditionFailed)
		}
	case !p.ifUnmodifiedSince.IsZero():
		if mod.After(p.ifUnmodifiedSince) {
			return apiErr(errPreconditionFailed)
		}
	}
	switch {
	case p.ifNoneMatch != "":
		if etagMatches(p.ifNoneMatch, info.ETag) {
			return apiErr(errNotModified)
		}
	case !p.ifModifiedSince.IsZero():
		if !mod.After(p.ifModifiedSince) {
			return apiErr(errNotModified)
		}
	}
	return nil
}

// etagMatches reports whether a conditional header's ETag list ("*" or
// comma-separated, quoted or not) names etag.
func etagMatches(list, etag string) bool {
	for _, candidate := range strings.Split(list, ",") {
		c := strings.TrimSpace(candidate)
		if c == "*" || unquoteETag(c) == etag {
			return true
		}
	}
	return false
}
