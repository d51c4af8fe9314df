package gateway

import (
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

// setStoredExtras writes the tag count of a GET or HEAD response.
func setStoredExtras(h http.Header, info object.ObjectInfo) {
	if v, ok := info.Headers[tagsHeader]; ok {
		if tags, err := parseTagQuery(v); err == nil && len(tags) > 0 {
			h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(tags)))
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
