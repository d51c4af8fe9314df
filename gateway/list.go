package gateway

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"tessera/object"
)

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
	startAfter string // v2 start-after
	fetchOwner bool
}

func parseListCommon(r *http.Request) (listRequest, url.Values, error) {
	bucket, err := bucketParam(r)
	if err != nil {
		return listRequest{}, nil, err
	}
	q := r.URL.Query()
	p := listRequest{bucket: bucket, prefix: q.Get("prefix"), delimiter: q.Get("delimiter")}
	if p.maxKeys, err = parseMaxKeys(q); err != nil {
		return listRequest{}, nil, err
	}
	switch et := q.Get("encoding-type"); et {
	case "":
	case "url":
		p.encodeURL = true
	default:
		return listRequest{}, nil, apiErr(errInvalidEncodingType)
	}
	return p, q, nil
}

// parseMaxKeys reads max-keys: absent is the S3 default, larger values are
// capped at it, and anything but a non-negative integer is refused.
func parseMaxKeys(q url.Values) (int, error) {
	if !q.Has("max-keys") {
		return object.DefaultMaxKeys, nil
	}
	n, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || n < 0 {
		return 0, apiErr(errInvalidMaxKeys)
	}
	return min(n, object.DefaultMaxKeys), nil
}

func parseListV2(r *http.Request) (listRequest, error) {
	p, q, err := parseListCommon(r)
	if err != nil {
		return listRequest{}, err
	}
	p.token = q.Get("continuation-token")
	p.startAfter = q.Get("start-after")
	p.fetchOwner = q.Get("fetch-owner") == "true"
	p.after = p.startAfter
	if q.Has("continuation-token") {
		after, err := decodeToken(p.token)
		if err != nil {
			return listRequest{}, err
		}
		p.after = after
	}
	return p, nil
}

// encodeToken makes the opaque continuation token for a listing position.
func encodeToken(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

func decodeToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 {
		return "", apiErr(errInvalidContinuationToken)
	}
	return string(b), nil
}

// list runs the backend listing; max-keys=0 asks for nothing and gets an
// empty, untruncated page without a backend call.
func (g *gateway) list(r *http.Request, p listRequest) (object.ListResult, error) {
	if p.maxKeys == 0 {
		if _, err := g.be.HeadBucket(r.Context(), p.bucket); err != nil {
			return object.ListResult{}, err
		}
		return object.ListResult{}, nil
	}
	return g.be.ListObjects(r.Context(), p.bucket, object.ListOptions{
		Prefix: p.prefix, Delimiter: p.delimiter, After: p.after, MaxKeys: p.maxKeys,
	})
}

func (g *gateway) listObjectsV2(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("list-type") != "2" {
		return g.listObjectsV1(w, r)
	}
	p, err := parseListV2(r)
	if err != nil {
		return err
	}
	res, err := g.list(r, p)
	if err != nil {
		return err
	}
	enc := p.encoder()
	out := listBucketResultV2{
		Name: p.bucket, Prefix: enc(p.prefix), Delimiter: enc(p.delimiter), MaxKeys: p.maxKeys,
		IsTruncated: res.IsTruncated, ContinuationToken: p.token, StartAfter: enc(p.startAfter),
		Contents: renderObjects(res.Objects, enc, p.fetchOwner), CommonPrefixes: renderPrefixes(res.Prefixes, enc),
	}
	out.KeyCount = len(out.Contents) + len(out.CommonPrefixes)
	if res.IsTruncated {
		out.NextContinuationToken = encodeToken(res.NextAfter)
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	return writeXML(w, http.StatusOK, out)
}

func (g *gateway) listObjectsV1(w http.ResponseWriter, r *http.Request) error {
	p, q, err := parseListCommon(r)
	if err != nil {
		return err
	}
	p.marker = q.Get("marker")
	p.after = p.marker
	res, err := g.list(r, p)
	if err != nil {
		return err
	}
	enc := p.encoder()
	out := listBucketResultV1{
		Name: p.bucket, Prefix: enc(p.prefix), Marker: enc(p.marker), MaxKeys: p.maxKeys,
		Delimiter: enc(p.delimiter), IsTruncated: res.IsTruncated,
		Contents: renderObjects(res.Objects, enc, true), CommonPrefixes: renderPrefixes(res.Prefixes, enc),
	}
	// S3 sends NextMarker only with a delimiter; without one clients
	// continue from the last key.
	if res.IsTruncated && p.delimiter != "" {
		out.NextMarker = enc(res.NextAfter)
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	return writeXML(w, http.StatusOK, out)
}

func (p listRequest) encoder() func(string) string {
	if p.encodeURL {
		return s3URLEncode
	}
	return func(s string) string { return s }
}

func renderObjects(objs []object.ObjectInfo, enc func(string) string, withOwner bool) []objectXML {
	out := make([]objectXML, 0, len(objs))
	for _, o := range objs {
		sc := o.StorageClass
		if sc == "" {
			sc = storageStandard
		}
		x := objectXML{Key: enc(o.Key), LastModified: xmlTime(o.ModTime), ETag: quoteETag(o.ETag), Size: o.Size, StorageClass: sc}
		if withOwner {
			x.Owner = &owner
		}
		out = append(out, x)
	}
	return out
}

func renderPrefixes(prefixes []string, enc func(string) string) []prefixXML {
	out := make([]prefixXML, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, prefixXML{Prefix: enc(p)})
	}
	return out
}

// s3URLEncode is encoding-type=url as S3 applies it: query escaping
// (space as "+", so clients decode with QueryUnescape) except that "/"
// stays literal.
func s3URLEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "%2F", "/")
}
