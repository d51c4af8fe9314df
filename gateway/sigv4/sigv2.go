package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2 (HMAC-SHA1), which boto3's generate_presigned_url
// still produces by default and older tools (s3cmd --signature-v2, boto3
// with signature_version "s3") send as "Authorization: AWS key:signature".
//
// The string to sign is the method, Content-MD5, Content-Type, the date
// line, the x-amz-* headers sorted by name, and the canonical resource:
// /BUCKET for a virtual-hosted request, the path exactly as sent, and the
// sub-resources of subresourcesV2 sorted by name with decoded values.

// subresourcesV2 are the query parameters that enter the V2 canonical
// resource: the AWS documentation's list with the ones AWS's own SDKs
// add (the list botocore signs with).
var subresourcesV2 = map[string]bool{
	"accelerate": true, "acl": true, "cors": true, "defaultObjectAcl": true, "location": true,
	"logging": true, "partNumber": true, "policy": true, "requestPayment": true, "torrent": true,
	"versioning": true, "versionId": true, "versions": true, "website": true, "uploads": true,
	"uploadId": true, "response-content-type": true, "response-content-language": true,
	"response-expires": true, "response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "delete": true, "lifecycle": true, "tagging": true,
	"restore": true, "storageClass": true, "notification": true, "replication": true,
	"analytics": true, "metrics": true, "inventory": true, "select": true, "select-type": true,
	"object-lock": true,
}

// extraSubresourcesV2 are signed by minio-go (and MinIO's list) but not
// by botocore; a request using them is also tried with them in, so both
// kinds of client verify.
var extraSubresourcesV2 = map[string]bool{"encryption": true, "legal-hold": true, "retention": true}

// v2Variant chooses among the strings to sign clients build.
type v2Variant struct {
	bucket string // from the Host of a virtual-hosted request
	// extra adds extraSubresourcesV2; bare writes a sub-resource sent
	// as "name=" without its "=", as minio-go signs it.
	extra, bare bool
	// amzDateLine puts x-amz-date on the date line instead of among the
	// amz headers, as the AWS documentation's DELETE example signs it.
	amzDateLine bool
	// strictPath signs the decoded path re-encoded with only RFC 3986's
	// unreserved characters and '/' left as they are, as minio-go does,
	// for a client that sent it encoded some other way.
	strictPath bool
	// bucketSlash ends a bucket-only resource with '/': botocore signs
	// /BUCKET/ for the path-style request line /BUCKET.
	bucketSlash bool
}

// StringToSignV2 is the V2 string to sign of r as botocore builds it,
// with date as its date line (the Expires value of a presigned URL) and
// bucket the bucket r's Host names ("" for a path-style request).
func StringToSignV2(r *http.Request, date, bucket string) string {
	return stringToSignV2(r, date, v2Variant{bucket: bucket})
}

func stringToSignV2(r *http.Request, date string, va v2Variant) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(r.Header.Get("Content-Md5") + "\n")
	b.WriteString(r.Header.Get("Content-Type") + "\n")
	skip := ""
	if va.amzDateLine {
		date, skip = r.Header.Get("X-Amz-Date"), "x-amz-date"
	}
	b.WriteString(date + "\n")
	writeAmzHeadersV2(&b, r.Header, skip)
	b.WriteString(canonicalResourceV2(r, va))
	return b.String()
}

// writeAmzHeadersV2 writes "name:v1,v2\n" for each x-amz-* header, sorted
// by name alone: sorting whole lines would put x-amz-copy-source-if-match
// before x-amz-copy-source, since '-' sorts before ':'.
func writeAmzHeadersV2(b *strings.Builder, h http.Header, skip string) {
	vals := map[string][]string{}
	var names []string
	for k, vs := range h {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") || lk == skip {
			continue
		}
		if _, ok := vals[lk]; !ok {
			names = append(names, lk)
		}
		for _, v := range vs {
			vals[lk] = append(vals[lk], strings.TrimSpace(v))
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(n + ":" + strings.Join(vals[n], ",") + "\n")
	}
}

func canonicalResourceV2(r *http.Request, va v2Variant) string {
	var b strings.Builder
	if va.bucket != "" {
		b.WriteString("/" + va.bucket)
	}
	p := rawPath(r)
	if va.strictPath {
		p = uriEncode(r.URL.Path, false)
	}
	b.WriteString(p)
	if va.bucketSlash && va.bucket == "" && p != "/" && strings.Count(p, "/") == 1 {
		b.WriteByte('/')
	}
	type sub struct{ key, value string }
	var subs []sub
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, v, hasV := strings.Cut(kv, "=")
		k = queryUnescape(k)
		if !subresourcesV2[k] && !(va.extra && extraSubresourcesV2[k]) {
			continue
		}
		switch {
		case hasV && (v != "" || !va.bare):
			subs = append(subs, sub{k, "=" + pathUnescape(v)})
		default:
			subs = append(subs, sub{k, ""})
		}
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].key < subs[j].key })
	for i, s := range subs {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(s.key + s.value)
	}
	return b.String()
}

// rawPath is the request path exactly as the client sent it, which is
// what V2 clients sign (they encode keys in their own ways).
func rawPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	if p := r.URL.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// pathUnescape decodes a sub-resource value as botocore does: %XX only,
// '+' kept.
func pathUnescape(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// SignV2 returns the base64 HMAC-SHA1 signature of a string to sign.
func SignV2(secret, stringToSign string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (v *Verifier) verifyV2Query(r *http.Request, q []param) (*Result, error) {
	ak, nAK := paramValue(q, "AWSAccessKeyId")
	sig, nSig := paramValue(q, "Signature")
	exp, nExp := paramValue(q, "Expires")
	if nAK != 1 || nSig != 1 || nExp != 1 || ak == "" || sig == "" {
		return nil, newError(ErrAccessDenied, "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || secs < 0 {
		return nil, newError(ErrAccessDenied, "Invalid date (should be seconds since epoch): %s", clip(exp, 32))
	}
	if now, at := v.now(), time.Unix(secs, 0); now.After(at) {
		return nil, expired(at, now, "")
	}
	return v.checkV2(r, ak, sig, exp)
}

func (v *Verifier) verifyV2Header(r *http.Request, h string) (*Result, error) {
	ak, sig, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(h, "AWS")), ":")
	if !ok || ak == "" || sig == "" {
		return nil, newError(ErrInvalidAuthorization, "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature")
	}
	// With x-amz-date, which enters the string among the amz headers,
	// the date line is empty and Date is ignored.
	dateLine, raw := "", ""
	if d, ok := headerValue(r, "X-Amz-Date"); ok {
		raw = d
	} else {
		dateLine = r.Header.Get("Date")
		raw = dateLine
	}
	t, err := parseHTTPDate(raw)
	if err != nil {
		return nil, invalidDate()
	}
	if err := v.checkSkew(t, raw); err != nil {
		return nil, err
	}
	return v.checkV2(r, ak, sig, dateLine)
}

func (v *Verifier) checkV2(r *http.Request, ak, sig, date string) (*Result, error) {
	secret, err := v.secret(ak)
	if err != nil {
		return nil, err
	}
	if err := checkToken(r.Header.Values("X-Amz-Security-Token")); err != nil {
		return nil, err
	}
	if !v.matchV2(r, secret, sig, date) {
		sts := stringToSignV2(r, date, v2Variant{bucket: BucketFromHost(r.Host, v.Domains)})
		return nil, signatureMismatch(ak, sts, sig, "")
	}
	ck, inTrailer, err := requestChecksum(r)
	if err != nil {
		return nil, err
	}
	if inTrailer {
		return nil, fmt.Errorf("%w: x-amz-trailer needs an aws-chunked payload", ErrInvalidChecksum)
	}
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	res := &Result{AccessKey: ak, Size: r.ContentLength, Checksums: map[string]string{}, Body: body}
	if ck != nil {
		res.Declared = ck.alg
		res.Body = &verifyingReader{rc: body, ck: ck, out: res.Checksums}
	}
	return res, nil
}

// matchV2 compares sig with the signature of each string to sign a
// client may have built, botocore's first; only the variants that differ
// for this request are tried. A presigned Signature whose '+' arrived
// unencoded was decoded to a space; it is taken back.
func (v *Verifier) matchV2(r *http.Request, secret, sig, date string) bool {
	sig = strings.ReplaceAll(sig, " ", "+")
	bucket := BucketFromHost(r.Host, v.Domains)
	mask := v2Variants(r, bucket, date)
	for i := 0; i < 32; i++ {
		if i&^mask != 0 {
			continue
		}
		va := v2Variant{bucket: bucket, bucketSlash: i&1 != 0, extra: i&2 != 0, bare: i&4 != 0,
			amzDateLine: i&8 != 0, strictPath: i&16 != 0}
		if hmac.Equal([]byte(SignV2(secret, stringToSignV2(r, date, va))), []byte(sig)) {
			return true
		}
	}
	return false
}

// v2Variants returns the bits of matchV2's variants that change r's
// string to sign: bucketSlash, extra, bare, amzDateLine, strictPath.
func v2Variants(r *http.Request, bucket, date string) int {
	mask := 0
	p := rawPath(r)
	if bucket == "" && p != "/" && strings.Count(p, "/") == 1 {
		mask |= 1
	}
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, v, hasV := strings.Cut(kv, "=")
		k = queryUnescape(k)
		if extraSubresourcesV2[k] {
			mask |= 2
		}
		if hasV && v == "" && (subresourcesV2[k] || extraSubresourcesV2[k]) {
			mask |= 4
		}
	}
	if _, ok := headerValue(r, "X-Amz-Date"); ok && date == "" {
		mask |= 8
	}
	if uriEncode(r.URL.Path, false) != p {
		mask |= 16
	}
	return mask
}

// BucketFromHost returns the bucket a Host header names under one of
// domains (BUCKET.DOMAIN, any port, case-insensitive), or "" for a
// path-style request.
func BucketFromHost(host string, domains []string) string {
	if len(domains) == 0 {
		return ""
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSuffix(d, "."))
		if b, ok := strings.CutSuffix(host, "."+d); ok && b != "" {
			return b
		}
	}
	return ""
}
