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

// check evaluates GET/HEAD conditions against info: a PreconditionFailed
// naming the failed header in <Condition>, a NotModified, or nil.
func (p preconditions) check(info object.ObjectInfo) error {
	header, notModified := p.failed(info)
	switch {
	case header == "":
		return nil
	case notModified:
		return apiErr(errNotModified)
	}
	return apiErrFields(errPreconditionFailed, errorField{"Condition", header})
}

// checkCopy evaluates x-amz-copy-source-if-* against the source. Unlike
// GET, every failed condition is a 412 (S3 never answers a copy with
// 304), and an If-Modified-Since later than now is ignored, as S3 does.
func (p preconditions) checkCopy(info object.ObjectInfo, now time.Time) error {
	if p.ifModifiedSince.After(now) {
		p.ifModifiedSince = time.Time{}
	}
	header, _ := p.failed(info)
	if header == "" {
		return nil
	}
	return apiErrFields(errPreconditionFailed, errorField{"Condition", "x-amz-copy-source-" + header})
}

// failed evaluates the conditions against info in RFC 9110 order, which
// is also S3's: If-Match outranks If-Unmodified-Since (a matching ETag
// wins over a failing date), If-None-Match outranks If-Modified-Since,
// and the first pair is evaluated before the second. It returns the
// failed header's name ("" when the request may proceed) and whether
// that failure is a GET's 304 rather than a 412.
func (p preconditions) failed(info object.ObjectInfo) (header string, notModified bool) {
	mod := info.ModTime.UTC().Truncate(time.Second)
	switch {
	case p.ifMatch != "":
		if !etagMatches(p.ifMatch, info.ETag) {
			return "If-Match", false
		}
	case !p.ifUnmodifiedSince.IsZero():
		if mod.After(p.ifUnmodifiedSince) {
			return "If-Unmodified-Since", false
		}
	}
	switch {
	case p.ifNoneMatch != "":
		if etagMatches(p.ifNoneMatch, info.ETag) {
			return "If-None-Match", true
		}
	case !p.ifModifiedSince.IsZero():
		if !mod.After(p.ifModifiedSince) {
			return "If-Modified-Since", true
		}
	}
	return "", false
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
