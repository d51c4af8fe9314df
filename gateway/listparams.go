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
	delimiter  string
	maxKeys    int
	encodeURL  bool
	after      string // where the backend listing starts
	marker     string // v1 marker
	token      string // v2 continuation-token, as sent
	hasToken   bool
	startAfter string // v2 start-after
	fetchOwner bool
}

// parseObjectList reads a ListObjects query. In v2 a continuation token
// decides where the page starts and start-after is only echoed: S3
// ignores start-after once a listing is being continued.
func parseObjectList(bucket string, q url.Values, v2 bool) (listRequest, error) {
	p := listRequest{bucket: bucket, prefix: q.Get("prefix"), delimiter: q.Get("delimiter")}
	var err error
	if p.maxKeys, err = parseMaxKeys(q); err != nil {
		return listRequest{}, err
	}
	if p.encodeURL, err = parseEncodingType(q); err != nil {
		return listRequest{}, err
	}
	if !v2 {
		if q.Has("start-after") {
			return listRequest{}, apiErrf(errInvalidArgument, "startAfter only supported in REST.GET.BUCKET with list-type=2")
		}
		p.marker = q.Get("marker")
		p.after = p.marker
		return p, nil
	}
	p.startAfter = q.Get("start-after")
	p.fetchOwner = q.Get("fetch-owner") == "true"
	p.after = p.startAfter
	if q.Has("continuation-token") {
		p.token, p.hasToken = q.Get("continuation-token"), true
		if p.after, err = decodeToken(tokenObjects, bucket, p.token); err != nil {
			return listRequest{}, err
		}
	}
	return p, nil
}

// parseMaxKeys reads max-keys: absent is the S3 default, larger values are
// capped at it, and anything but an integer in [0, 2^31) is refused with
// the message S3 sends.
func parseMaxKeys(q url.Values) (int, error) {
	if !q.Has("max-keys") {
		return object.DefaultMaxKeys, nil
	}
	n, ok := parseInt32(q.Get("max-keys"))
	if !ok || n < 0 {
		return 0, apiErr(errInvalidMaxKeys)
	}
	return min(n, object.DefaultMaxKeys), nil
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
		after, err := decodeToken(tokenBuckets, "", tok)
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
		MaxUploads: object.DefaultMaxKeys,
	}}
	if q.Has("max-uploads") {
		n, ok := parseInt32(q.Get("max-uploads"))
		if !ok || n < 0 {
			return uploadListRequest{}, apiErrf(errInvalidArgument, "Argument max-uploads must be an integer between 0 and 2147483647")
		}
		p.opts.MaxUploads = min(n, object.DefaultMaxKeys)
	}
	var err error
	if p.encodeURL, err = parseEncodingType(q); err != nil {
		return uploadListRequest{}, err
	}
	return p, nil
}

// parsePartList reads ListParts' part-number-marker and max-parts.
func parsePartList(q url.Values) (marker, maxParts int, err error) {
	maxParts = object.DefaultMaxKeys
	if q.Has("max-parts") {
		n, ok := parseInt32(q.Get("max-parts"))
		if !ok || n < 0 {
			return 0, 0, apiErrf(errInvalidArgument, "Argument max-parts must be an integer between 0 and 2147483647")
		}
		maxParts = min(n, object.DefaultMaxKeys)
	}
	if q.Has("part-number-marker") {
		v := q.Get("part-number-marker")
		n, ok := parseInt32(v)
		if !ok {
			return 0, 0, apiErrf(errInvalidArgument, "Provided %s not an integer or within integer range", v)
		}
		if n < 0 {
			return 0, 0, apiErrf(errInvalidArgument, "Argument part-number-marker must be an integer between 0 and 2147483647")
		}
		marker = n
	}
	return marker, maxParts, nil
}
