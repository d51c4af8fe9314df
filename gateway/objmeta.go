package gateway

import (
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"tessera/object"
)

// Object headers tessera stores for itself in ObjectInfo.Headers. They are
// never echoed as-is: checksums only with x-amz-checksum-mode: ENABLED,
// tags only as a count.
const (
	checksumHeaderPrefix = "X-Amz-Checksum-"
	tagsHeader           = "X-Tessera-Tagging"
)

// internalHeader reports whether a stored header is one of ours.
func internalHeader(name string) bool {
	return name == tagsHeader || strings.HasPrefix(name, checksumHeaderPrefix)
}

// checksumRecorder copies the checksums the Authenticator validated into
// the stored headers once the body has been read to its end: trailer
// checksums are only known then, and the object layer commits the record
// after the body is drained.
type checksumRecorder struct {
	r       io.Reader
	req     *http.Request
	headers map[string]string
	done    bool
}

func recordChecksums(body io.Reader, r *http.Request, headers map[string]string) io.Reader {
	if headers == nil {
		return body
	}
	return &checksumRecorder{r: body, req: r, headers: headers}
}

func (c *checksumRecorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF && !c.done {
		c.done = true
		for name, sum := range authResult(c.req).Checksums {
			c.headers[checksumHeaderPrefix+strings.ToUpper(name)] = sum
		}
	}
	return n, err
}

// setStoredExtras writes the stored checksums (when asked for) and the tag
// count of a GET or HEAD response.
func setStoredExtras(h http.Header, r *http.Request, info object.ObjectInfo) {
	withSums := strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED")
	for k, v := range info.Headers {
		switch {
		case k == tagsHeader:
			if tags, err := parseTagQuery(v); err == nil && len(tags) > 0 {
				h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(tags)))
			}
		case withSums && strings.HasPrefix(k, checksumHeaderPrefix):
			h.Set(k, v)
		}
	}
}

// tag is one object tag.
type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// S3's tag limits.
const (
	maxTags        = 10
	maxTagKeyLen   = 128
	maxTagValueLen = 256
)

// parseTagQuery decodes the x-amz-tagging form ("k1=v1&k2=v2").
func parseTagQuery(s string) ([]tag, error) {
	if s == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, apiErrf(errInvalidArgument, "The x-amz-tagging header is not a valid query string.")
	}
	var tags []tag
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, apiErrf(errInvalidArgument, "Duplicate tag key %q.", k)
		}
		tags = append(tags, tag{Key: k, Value: vs[0]})
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	return tags, validateTags(tags)
}

func validateTags(tags []tag) error {
	if len(tags) > maxTags {
		return apiErrf(errInvalidArgument, "Object tags cannot be greater than %d.", maxTags)
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if t.Key == "" || len(t.Key) > maxTagKeyLen || len(t.Value) > maxTagValueLen {
			return apiErrf(errInvalidArgument, "The tag key or value is empty or too long.")
		}
		if seen[t.Key] {
			return apiErrf(errInvalidArgument, "Cannot provide multiple tags with the same key %q.", t.Key)
		}
		seen[t.Key] = true
	}
	return nil
}

// encodeTags is the stored form: the same query encoding as x-amz-tagging.
func encodeTags(tags []tag) string {
	q := url.Values{}
	for _, t := range tags {
		q.Set(t.Key, t.Value)
	}
	return q.Encode()
}
