package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2 (HMAC-SHA1), which boto3's generate_presigned_url
// still produces by default and older tools send as "Authorization: AWS
// key:signature". Only path-style requests verify: the canonical resource
// names the bucket, which a virtual-hosted request carries in its Host.

// subresourcesV2 are the query parameters that enter the V2 canonical
// resource (the list botocore and the AWS documentation use).
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

// StringToSignV2 is the V2 string to sign of r, with date as its Date line
// (the Expires value of a presigned URL).
func StringToSignV2(r *http.Request, date string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(r.Header.Get("Content-Md5") + "\n")
	b.WriteString(r.Header.Get("Content-Type") + "\n")
	b.WriteString(date + "\n")
	var amz []string
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") {
			vals := make([]string, len(vs))
			for i, v := range vs {
				vals[i] = strings.TrimSpace(v)
			}
			amz = append(amz, lk+":"+strings.Join(vals, ","))
		}
	}
	sort.Strings(amz)
	for _, h := range amz {
		b.WriteString(h + "\n")
	}
	b.WriteString(canonicalResourceV2(r))
	return b.String()
}

func canonicalResourceV2(r *http.Request) string {
	res := r.URL.EscapedPath()
	var subs [][2]string
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, v, hasV := strings.Cut(kv, "=")
		if !subresourcesV2[k] {
			continue
		}
		if hasV {
			if dv, err := url.QueryUnescape(v); err == nil {
				v = dv
			}
			subs = append(subs, [2]string{k, "=" + v})
		} else {
			subs = append(subs, [2]string{k, ""})
		}
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i][0] < subs[j][0] })
	for i, s := range subs {
		if i == 0 {
			res += "?"
		} else {
			res += "&"
		}
		res += s[0] + s[1]
	}
	return res
}

// SignV2 returns the base64 HMAC-SHA1 signature of a string to sign.
func SignV2(secret, stringToSign string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (v *Verifier) verifyV2Query(r *http.Request) (*Result, error) {
	q := r.URL.Query()
	ak, sig, exp := q.Get("AWSAccessKeyId"), q.Get("Signature"), q.Get("Expires")
	if ak == "" || sig == "" || exp == "" {
		return nil, malformed("signature version 2 query needs AWSAccessKeyId, Signature and Expires")
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return nil, malformed("Expires %.32q is not a number", exp)
	}
	if v.now().After(time.Unix(secs, 0)) {
		return nil, fmt.Errorf("%w: expired at %s", ErrExpired, time.Unix(secs, 0).UTC().Format(time.RFC3339))
	}
	return v.checkV2(r, ak, sig, exp)
}

func (v *Verifier) verifyV2Header(r *http.Request, h string) (*Result, error) {
	cred := strings.TrimSpace(strings.TrimPrefix(h, "AWS "))
	ak, sig, ok := strings.Cut(cred, ":")
	if !ok || ak == "" || sig == "" {
		return nil, malformed("signature version 2 header is not AWS key:signature")
	}
	date := r.Header.Get("Date")
	t, err := http.ParseTime(date)
	if d := r.Header.Get("X-Amz-Date"); d != "" {
		// x-amz-date enters the string with the amz headers; the Date line
		// is then empty.
		date = ""
		if t, err = http.ParseTime(d); err != nil {
			t, err = parseAmzDate(d)
		}
	}
	if err != nil {
		return nil, malformed("signature version 2 needs a valid Date or x-amz-date")
	}
	if d := v.now().Sub(t); d > v.maxSkew() || d < -v.maxSkew() {
		return nil, fmt.Errorf("%w: request time is %s from server time", ErrRequestTimeTooSkewed, d.Round(time.Second))
	}
	return v.checkV2(r, ak, sig, date)
}

func (v *Verifier) checkV2(r *http.Request, ak, sig, date string) (*Result, error) {
	if v.Lookup == nil {
		return nil, ErrInvalidAccessKeyID
	}
	secret, ok := v.Lookup(ak)
	if !ok {
		return nil, fmt.Errorf("%w: %.128q", ErrInvalidAccessKeyID, ak)
	}
	want := SignV2(secret, StringToSignV2(r, date))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return nil, ErrSignatureDoesNotMatch
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
