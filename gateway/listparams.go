package gateway

import (
	"math"
	"net/url"
	"strconv"

	"tessera/object"
)

// The list operations' query parameters, parsed from url.Values alone so
// each parser can be fuzzed. Every bad value is S3's InvalidArgument.

// listRequest is a parsed ListObjects (v1) or ListObjectsV2.
type listRequest struct {
	bucket     string
	prefix     string
	hasPrefix  bool // prefix was sent: only then is <Prefix> echoed
	delimiter  string
	maxKeys    int
	encodeURL  bool
	after      string // where the backend listing starts
	marker     string // v1 marker
	hasMarker  bool   // v1 marker was sent: only then is <Marker> echoed
	token      string // v2 continuation-token, as sent
	hasToken   bool
	startAfter string // v2 start-after
	fetchOwner bool
}

// parseObjectList reads a ListObjects query. In v2 the page starts after
// the greater of the continuation token's position and start-after: a
// token resumes a listing, and a start-after beyond it still holds.
func parseObjectList(bucket string, q url.Values, v2 bool) (listRequest, error) {
	p := listRequest{bucket: bucket, prefix: q.Get("prefix"), hasPrefix: q.Has("prefix"), delimiter: q.Get("delimiter")}
	var err error
	if p.maxKeys, err = parseLimit(q, "max-keys"); err != nil {
		return listRequest{}, err
	}
	if p.encodeURL, err = parseEncodingType(q); err != nil {
		return listRequest{}, err
	}
	if !v2 {
		if q.Has("start-after") {
			return listRequest{}, apiErrf(errInvalidArgument, "startAfter only supported in REST.GET.BUCKET with list-type=2")
		}
		p.marker, p.hasMarker = q.Get("marker"), q.Has("marker")
		p.after = p.marker
		return p, nil
	}
	p.startAfter = q.Get("start-after")
	p.fetchOwner = q.Get("fetch-owner") == "true"
	p.after = p.startAfter
	if q.Has("continuation-token") {
		p.token, p.hasToken = q.Get("continuation-token"), true
		pos, err := decodeToken(p.token)
		if err != nil {
			return listRequest{}, err
		}
		p.after = max(pos, p.startAfter)
	}
	return p, nil
}

// parseLimit reads one of the list operations' count parameters
// (max-keys, max-uploads, max-parts): absent is the S3 default, larger
// values are capped at it, and anything but an integer in [0, 2^31) is
// refused with the messages versitygw's suite expects (S3 words the
// negative case "Argument maxKeys must be ..."; clients read only the
// code).
func parseLimit(q url.Values, name string) (int, error) {
	if !q.Has(name) {
		return object.DefaultMaxKeys, nil
	}
	n, err := parseNonNegative(q, name)
	if err != nil {
		return 0, err
	}
	return min(n, object.DefaultMaxKeys), nil
}

// parseNonNegative reads a parameter that must be an integer in
// [0, 2^31), with S3's ArgumentName and ArgumentValue in the refusal.
func parseNonNegative(q url.Values, name string) (int, error) {
	v := q.Get(name)
	n, ok := parseInt32(v)
	if !ok {
		return 0, withFields(apiErrf(errInvalidArgument, "Provided %s not an integer or within integer range", v),
			errorField{"ArgumentName", name}, errorField{"ArgumentValue", v})
	}
	if n < 0 {
		return 0, withFields(apiErrf(errInvalidArgument, "Argument %s must be an integer between 0 and 2147483647", v),
			errorField{"ArgumentName", name}, errorField{"ArgumentValue", v})
	}
	return n, nil
}

// parseEncodingType reports whether encoding-type=url was asked for; S3
// knows no other value.
func parseEncodingType(q url.Values) (bool, error) {
	switch q.Get("encoding-type") {
	case "":
		return false, nil
	case "url":
		return true, nil
	}
	return false, apiErr(errInvalidEncodingType)
}

// parseInt32 parses a decimal integer that fits S3's 32-bit fields.
func parseInt32(s string) (int, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// maxBuckets is the largest max-buckets S3 accepts, and its page size when
// ListBuckets is paginated without one.
const maxBuckets = 10000

// bucketListRequest is a parsed ListBuckets.
type bucketListRequest struct {
	prefix    string
	hasPrefix bool
	region    string // bucket-region filter; "" lists every region
	after     string // continue after this bucket name
	max       int    // 0: every bucket, unpaginated
}

// parseBucketList reads ListBuckets' parameters (the 2024 API). Without
// any of them the listing is whole and unpaginated, as it always was;
// with any, S3 pages at max-buckets (default 10000).
func parseBucketList(q url.Values) (bucketListRequest, error) {
	p := bucketListRequest{prefix: q.Get("prefix"), hasPrefix: q.Has("prefix"), region: q.Get("bucket-region")}
	paged := p.hasPrefix || q.Has("bucket-region") || q.Has("continuation-token") || q.Has("max-buckets")
	if q.Has("max-buckets") {
		n, ok := parseInt32(q.Get("max-buckets"))
		if !ok || n < 1 || n > maxBuckets {
			return bucketListRequest{}, apiErrf(errInvalidArgument, "Argument max-buckets must be an integer between 1 and %d.", maxBuckets)
		}
		p.max = n
	}
	if tok := q.Get("continuation-token"); tok != "" {
		after, err := decodeToken(tok)
		if err != nil {
			return bucketListRequest{}, err
		}
		p.after = after
	}
	if paged && p.max == 0 {
		p.max = maxBuckets
	}
	return p, nil
}

// uploadListRequest is a parsed ListMultipartUploads.
type uploadListRequest struct {
	opts      object.ListUploadsOptions
	encodeURL bool
}

// parseUploadList reads ListMultipartUploads' parameters. upload-id-marker
// is kept as sent, for the echo; without key-marker the listing ignores it.
func parseUploadList(q url.Values) (uploadListRequest, error) {
	p := uploadListRequest{opts: object.ListUploadsOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"),
	}}
	var err error
	if p.opts.MaxUploads, err = parseLimit(q, "max-uploads"); err != nil {
		return uploadListRequest{}, err
	}
	if p.encodeURL, err = parseEncodingType(q); err != nil {
		return uploadListRequest{}, err
	}
	return p, nil
}

// parsePartList reads ListParts' part-number-marker and max-parts.
func parsePartList(q url.Values) (marker, maxParts int, err error) {
	if maxParts, err = parseLimit(q, "max-parts"); err != nil {
		return 0, 0, err
	}
	if q.Has("part-number-marker") {
		if marker, err = parseNonNegative(q, "part-number-marker"); err != nil {
			return 0, 0, err
		}
	}
	return marker, maxParts, nil
}
