package gateway

import (
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"tessera/object"
)

// tag is one object tag.
type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// S3's tag limits; lengths count characters, not bytes.
const (
	maxTags        = 10
	maxTagKeyLen   = 128
	maxTagValueLen = 256
)

// The S3 answers to bad tags. A header that is not a valid tag query
// string (or repeats a key) is InvalidArgument; a bad key or value is
// InvalidTag naming it; too many tags is BadRequest.
const (
	msgTagHeader    = "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates."
	msgTagKey       = "The TagKey you have provided is invalid"
	msgTagValue     = "The TagValue you have provided is invalid"
	msgTagDuplicate = "Cannot provide multiple Tags with the same key"
	msgTagCount     = "Object tags cannot be greater than 10"
)

// parseTagHeader parses x-amz-tagging ("k1=v1&k2=v2") as S3 does: empty
// pieces are skipped, a piece without "=" is a key with an empty value,
// and keys and values are query-unescaped ("+" is a space) before they
// are checked. The tags come back sorted by key.
func parseTagHeader(s string) ([]tag, error) {
	var tags []tag
	seen := map[string]bool{}
	for _, piece := range strings.Split(s, "&") {
		if piece == "" {
			continue
		}
		rawKey, rawValue, hasEq := strings.Cut(piece, "=")
		key, err1 := url.QueryUnescape(rawKey)
		value, err2 := url.QueryUnescape(rawValue)
		if (hasEq && rawKey == "") || err1 != nil || err2 != nil {
			return nil, apiErrf(errInvalidArgument, msgTagHeader)
		}
		if err := checkTag(tag{Key: key, Value: value}); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, apiErrf(errInvalidArgument, msgTagHeader)
		}
		seen[key] = true
		tags = append(tags, tag{Key: key, Value: value})
	}
	if len(tags) > maxTags {
		return nil, apiErrf(errBadRequest, msgTagCount)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	return tags, nil
}

// validateTags checks a Tagging document's tag set (PutObjectTagging, a
// POST form's tagging field): the count first, then each tag in order.
func validateTags(tags []tag) error {
	if len(tags) > maxTags {
		return apiErrf(errBadRequest, msgTagCount)
	}
	return checkTagSet(tags)
}

// checkTagSet checks each tag in order and that no key repeats.
func checkTagSet(tags []tag) error {
	seen := map[string]bool{}
	for _, t := range tags {
		if err := checkTag(t); err != nil {
			return err
		}
		if seen[t.Key] {
			return invalidTag(msgTagDuplicate, errorField{"TagKey", t.Key})
		}
		seen[t.Key] = true
	}
	return nil
}

// checkTag applies S3's rules to one tag: a key of 1-128 and a value of
// 0-256 characters, each made of letters, digits, spaces and + - = . _ : / @.
func checkTag(t tag) error {
	if n := utf8.RuneCountInString(t.Key); n == 0 || n > maxTagKeyLen || !validTagText(t.Key) {
		return invalidTag(msgTagKey, errorField{"TagKey", t.Key})
	}
	if utf8.RuneCountInString(t.Value) > maxTagValueLen || !validTagText(t.Value) {
		return invalidTag(msgTagValue, errorField{"TagKey", t.Key}, errorField{"TagValue", t.Value})
	}
	return nil
}

// invalidTag is S3's InvalidTag error, which names the tag in <TagKey>
// and, for a bad value, <TagValue>.
func invalidTag(msg string, fields ...errorField) error {
	return &s3Error{code: errInvalidTag, msg: msg, fields: fields}
}

// validTagText reports whether s is valid UTF-8 made only of the
// characters S3 allows in tags.
func validTagText(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.In(r, unicode.Z):
		case strings.ContainsRune("_.:/=+-@", r):
		default:
			return false
		}
	}
	return true
}

// parseTagQuery decodes the stored form written by encodeTags. Stored
// tags were checked when they were set, so it does not check them again
// (an older server's rules must not make them vanish).
func parseTagQuery(s string) ([]tag, error) {
	if s == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, apiErrf(errInvalidArgument, "The stored tags are not a valid query string.")
	}
	tags := make([]tag, 0, len(q))
	for k, vs := range q {
		tags = append(tags, tag{Key: k, Value: vs[0]})
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	return tags, nil
}

// encodeTags is the stored form: the same query encoding as x-amz-tagging.
func encodeTags(tags []tag) string {
	q := url.Values{}
	for _, t := range tags {
		q.Set(t.Key, t.Value)
	}
	return q.Encode()
}

// ObjectTags are the tags an object was stored with (PUT's x-amz-tagging,
// PutObjectTagging), read from its info; nil when it has none.
func ObjectTags(info object.ObjectInfo) map[string]string {
	tags, err := parseTagQuery(info.Headers[tagsHeader])
	if err != nil || len(tags) == 0 {
		return nil
	}
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		out[t.Key] = t.Value
	}
	return out
}
