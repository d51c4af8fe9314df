package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"tessera/object"
)

const (
	metaPrefix = "x-amz-meta-"
	// maxUserMeta is S3's limit on user metadata: names (without the
	// prefix) plus values, in bytes.
	maxUserMeta = 2 << 10
	// defaultContentType is what S3 reports for objects stored without one.
	defaultContentType = "binary/octet-stream"
	storageStandard    = "STANDARD"
)

// storedHeaders are the standard headers kept with an object and returned
// on GET and HEAD.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"}

// redirectHeader is stored with the object and returned on GET and HEAD,
// as S3 does; tessera serves no website, so nothing follows it. Unlike the
// storedHeaders, a copy does not take it from its source (S3's rule).
const redirectHeader = "X-Amz-Website-Redirect-Location"

// maxRedirect is S3's limit on a website redirect location, in bytes.
const maxRedirect = 2 << 10

// refusedHeaders name features that would silently change meaning if
// ignored (encryption): a request carrying one is refused with
// NotImplemented.
var refusedHeaders = []string{
	"X-Amz-Server-Side-Encryption",
	"X-Amz-Server-Side-Encryption-Customer-Algorithm",
	"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
}

// lockHeaders set a new version's object lock (lockOnWrite); POST
// uploads do not read them, so a form naming one is refused.
var lockHeaders = []string{
	"X-Amz-Object-Lock-Mode",
	"X-Amz-Object-Lock-Retain-Until-Date",
	"X-Amz-Object-Lock-Legal-Hold",
}

// refuseUnsupported rejects requests relying on a header in refusedHeaders.
func refuseUnsupported(h http.Header) error {
	for _, name := range refusedHeaders {
		if h.Get(name) != "" {
			return apiErrf(errNotImplemented, "The %s header is not supported.", name)
		}
	}
	return nil
}

// parsePutOptions reads what a PUT, CreateMultipartUpload or copy with
// REPLACE stores besides the bytes. Content-MD5 is left to the caller.
func parsePutOptions(h http.Header) (object.PutOptions, error) {
	if err := refuseUnsupported(h); err != nil {
		return object.PutOptions{}, err
	}
	meta, err := userMeta(h)
	if err != nil {
		return object.PutOptions{}, err
	}
	opts := object.PutOptions{
		ContentType:  h.Get("Content-Type"),
		UserMeta:     meta,
		Headers:      map[string]string{},
		StorageClass: h.Get("X-Amz-Storage-Class"),
	}
	if opts.ContentType == "" {
		opts.ContentType = defaultContentType
	}
	for _, name := range storedHeaders {
		if v := h.Get(name); v != "" {
			opts.Headers[name] = v
		}
	}
	if err := readRedirect(h, opts.Headers); err != nil {
		return object.PutOptions{}, err
	}
	tags, err := parseTagHeader(h.Get("X-Amz-Tagging"))
	if err != nil {
		return object.PutOptions{}, err
	}
	if len(tags) > 0 {
		opts.Headers[tagsHeader] = encodeTags(tags)
	}
	if ce, ok := opts.Headers["Content-Encoding"]; ok {
		if ce = stripAWSChunked(ce); ce == "" {
			delete(opts.Headers, "Content-Encoding")
		} else {
			opts.Headers["Content-Encoding"] = ce
		}
	}
	return opts, nil
}

// readRedirect checks a website redirect location as S3 does (a path
// from the root or an http(s) URL, at most 2 KiB) and adds it to headers.
func readRedirect(h http.Header, headers map[string]string) error {
	v := h.Get(redirectHeader)
	if v == "" {
		return nil
	}
	if len(v) > maxRedirect || !(strings.HasPrefix(v, "/") || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) {
		return apiErr(errInvalidRedirectLocation)
	}
	headers[redirectHeader] = v
	return nil
}

// userMeta collects x-amz-meta-* headers under lowercase names without the
// prefix and enforces S3's 2 KiB total.
func userMeta(h http.Header) (map[string]string, error) {
	meta := map[string]string{}
	total := 0
	for k, vs := range h {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, metaPrefix) || len(lk) == len(metaPrefix) {
			continue
		}
		name := lk[len(metaPrefix):]
		v := strings.Join(vs, ",")
		meta[name] = v
		total += len(name) + len(v)
	}
	if total > maxUserMeta {
		return nil, withFields(apiErr(errMetadataTooLarge),
			errorField{"Size", strconv.Itoa(total)}, errorField{"MaxSizeAllowed", strconv.Itoa(maxUserMeta)})
	}
	return meta, nil
}

// stripAWSChunked removes the aws-chunked transfer coding, which describes
// the upload's framing and not the stored bytes. Any other value is kept
// byte for byte.
func stripAWSChunked(ce string) string {
	parts := strings.Split(ce, ",")
	keep := parts[:0]
	for _, c := range parts {
		if !strings.EqualFold(strings.TrimSpace(c), "aws-chunked") {
			keep = append(keep, c)
		}
	}
	if len(keep) == len(parts) {
		return ce
	}
	for i := range keep {
		keep[i] = strings.TrimSpace(keep[i])
	}
	return strings.Join(keep, ",")
}

// setObjectHeaders writes an object's stored metadata as response headers
// (GET and HEAD). Content-Length is the caller's, as it depends on the range.
func setObjectHeaders(h http.Header, info object.ObjectInfo) {
	h.Set("ETag", quoteETag(info.ETag))
	h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	ct := info.ContentType
	if ct == "" {
		ct = defaultContentType
	}
	h.Set("Content-Type", ct)
	for k, v := range info.Headers {
		if !internalHeader(k) {
			h.Set(k, v)
		}
	}
	for k, v := range info.UserMeta {
		// Not canonicalised: SDKs take the name after the prefix verbatim,
		// and S3 sends it in lowercase.
		h[metaPrefix+k] = []string{v}
	}
	if sc := info.StorageClass; sc != "" && sc != storageStandard {
		h.Set("X-Amz-Storage-Class", sc)
	}
}

// responseOverrides are the GET query parameters that replace a stored
// header in the response (used by presigned downloads).
var responseOverrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-language":    "Content-Language",
	"response-expires":             "Expires",
	"response-cache-control":       "Cache-Control",
	"response-content-disposition": "Content-Disposition",
	"response-content-encoding":    "Content-Encoding",
}

func applyResponseOverrides(h http.Header, r *http.Request) {
	q := r.URL.Query()
	for param, header := range responseOverrides {
		if v := q.Get(param); v != "" {
			h.Set(header, v)
		}
	}
}

func quoteETag(etag string) string { return `"` + etag + `"` }

// unquoteETag strips whitespace, a weak prefix and the quotes clients put
// around ETags (in XML bodies and conditional headers).
func unquoteETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s
}
