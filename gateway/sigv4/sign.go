package sigv4

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// unsignedHeaderNames are left out of SignRequest's signature because
// proxies and transports add or rewrite them.
var unsignedHeaderNames = map[string]bool{
	"authorization": true, "user-agent": true, "expect": true,
	"accept-encoding": true, "transfer-encoding": true, "x-amzn-trace-id": true,
}

// SignRequest signs r in place for S3 with an Authorization header, as a
// client would: it sets X-Amz-Date and X-Amz-Content-Sha256 (payloadHash:
// a hex SHA-256, UNSIGNED-PAYLOAD, ...) and signs host plus every header
// present except the ones transports rewrite. r.URL's path must already be
// escaped the way it will be sent. It does not read r.Body.
func SignRequest(r *http.Request, accessKey, secret, region string, t time.Time, payloadHash string) {
	t = t.UTC()
	amzDate := t.Format(iso8601Format)
	r.Header.Del("Authorization")
	r.Header.Set("X-Amz-Date", amzDate)
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	names := []string{"host"}
	for k := range r.Header {
		if lk := strings.ToLower(k); !unsignedHeaderNames[lk] && lk != "host" {
			names = append(names, lk)
		}
	}
	if r.ContentLength > 0 && r.Header.Get("Content-Length") == "" {
		names = append(names, "content-length")
	}
	sort.Strings(names)
	a := authorization{
		cred:          credential{accessKey: accessKey, date: t.Format(scopeDate), region: region},
		signedHeaders: names,
	}
	canon := canonicalRequest(r, parseQuery(r.URL.RawQuery), names, payloadHash)
	a.signature = hmacSHA256(signingKey(secret, a.cred.date, region), stringToSign(amzDate, a.cred.scope(), canon))
	r.Header.Set("Authorization", a.String())
}

// Presign returns rawURL presigned for method with S3's query-string
// authentication: only host is signed, the payload is UNSIGNED-PAYLOAD, and
// the URL is valid from t for expires (1 s to 7 days).
func Presign(method, rawURL, accessKey, secret, region string, t time.Time, expires time.Duration) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("presign: %w", err)
	}
	secs := int64(expires / time.Second)
	if secs < 1 || secs > maxPresignExpires {
		return "", fmt.Errorf("presign: expiry %s out of range", expires)
	}
	t = t.UTC()
	cred := credential{accessKey: accessKey, date: t.Format(scopeDate), region: region}
	q := append(parseQuery(u.RawQuery),
		param{"X-Amz-Algorithm", algorithm},
		param{"X-Amz-Credential", accessKey + "/" + cred.scope()},
		param{"X-Amz-Date", t.Format(iso8601Format)},
		param{"X-Amz-Expires", strconv.FormatInt(secs, 10)},
		param{"X-Amz-SignedHeaders", "host"},
	)
	r := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{}}
	canon := canonicalRequest(r, q, []string{"host"}, unsignedPayload)
	sig := hmacSHA256(signingKey(secret, cred.date, region), stringToSign(t.Format(iso8601Format), cred.scope(), canon))
	u.RawQuery = canonicalQuery(q) + "&X-Amz-Signature=" + hex.EncodeToString(sig)
	return u.String(), nil
}
