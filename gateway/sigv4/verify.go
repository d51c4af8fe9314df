package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

const defaultMaxSkew = 15 * time.Minute

// signed is a request's claims once parsed, whichever form carried them.
type signed struct {
	authorization
	amzDate     string // timestamp exactly as it enters the string to sign
	t           time.Time
	query       []param // the query as it enters the canonical request
	payloadHash string
}

// Verify authenticates r and returns the body to read in its place. It
// reads only the request line and headers; payload checks happen as
// Result.Body is read (see the package doc). Errors wrap the sentinels of
// api.go; most are an *Error carrying S3's message.
func (v *Verifier) Verify(r *http.Request) (*Result, error) {
	auth := r.Header.Values("Authorization")
	q := parseQuery(r.URL.RawQuery)
	presigned := hasParam(q, "X-Amz-Algorithm") || hasParam(q, "X-Amz-Credential") ||
		hasParam(q, "X-Amz-Signature")
	switch {
	case len(auth) > 1:
		return nil, newError(ErrInvalidAuthorization, "Only one Authorization header may be specified.")
	case len(auth) == 1 && (presigned || hasParam(q, "Signature")):
		return nil, newError(ErrInvalidAuthorization, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
	case len(auth) == 1:
		return v.verifyHeader(r, auth[0], q)
	case presigned:
		return v.verifyPresigned(r, q)
	case hasParam(q, "AWSAccessKeyId") || hasParam(q, "Signature") || hasParam(q, "Expires"):
		return v.verifyV2Query(r, q)
	}
	return nil, ErrMissingAuth
}

func (v *Verifier) verifyHeader(r *http.Request, h string, q []param) (*Result, error) {
	if h == "AWS" || strings.HasPrefix(h, "AWS ") {
		return v.verifyV2Header(r, h)
	}
	if h == "" {
		return nil, ErrMissingAuth
	}
	a, err := parseAuthorization(h)
	if err != nil {
		return nil, err
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, newError(ErrMissingHeader, "Missing required header for this request: x-amz-content-sha256")
	}
	amzDate, t, err := requestDate(r)
	if err != nil {
		return nil, err
	}
	s := &signed{authorization: a, amzDate: amzDate, t: t, query: q, payloadHash: payload}
	if err := v.checkScope(s, false); err != nil {
		return nil, err
	}
	secret, err := v.secret(s.cred.accessKey)
	if err != nil {
		return nil, err
	}
	if err := checkToken(r.Header.Values("X-Amz-Security-Token")); err != nil {
		return nil, err
	}
	if err := v.checkSkew(t, amzDate); err != nil {
		return nil, err
	}
	if err := checkPayloadHash(payload); err != nil {
		return nil, err
	}
	key, err := v.checkSignature(r, s, secret)
	if err != nil {
		return nil, err
	}
	return newResult(r, s, key, false)
}

// requestDate reads x-amz-date, or failing that the Date header, in any
// form S3 accepts there; the timestamp the string to sign carries is then
// the ISO 8601 basic form of that time.
func requestDate(r *http.Request) (string, time.Time, error) {
	if d, ok := headerValue(r, "X-Amz-Date"); ok {
		t, err := parseAmzDate(d)
		if err != nil {
			return "", time.Time{}, invalidDate()
		}
		return d, t, nil
	}
	if d := r.Header.Get("Date"); d != "" {
		t, err := parseHTTPDate(d)
		if err != nil {
			return "", time.Time{}, invalidDate()
		}
		t = t.UTC()
		return t.Format(iso8601Format), t, nil
	}
	return "", time.Time{}, invalidDate()
}

// headerValue is r.Header.Get that tells an empty header from a missing one.
func headerValue(r *http.Request, name string) (string, bool) {
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// checkScope checks the credential scope against the Verifier: the
// region it serves and the request's own date.
func (v *Verifier) checkScope(s *signed, query bool) error {
	if v.Region != "" && s.cred.region != v.Region {
		return wrongRegion(s.cred.region, v.Region, query)
	}
	if s.cred.date != s.t.UTC().Format(scopeDate) {
		if query {
			return queryMalformed("Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", s.cred.date, s.t.UTC().Format(scopeDate))
		}
		return headerMalformed("Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	return nil
}

// secret finds the secret key of an access key.
func (v *Verifier) secret(accessKey string) (string, error) {
	secret, ok := "", false
	if v.Lookup != nil {
		secret, ok = v.Lookup(accessKey)
	}
	if !ok {
		return "", &Error{Err: ErrInvalidAccessKeyID, AccessKeyID: clip(accessKey, 128)}
	}
	return secret, nil
}

// checkSignature recomputes the request signature and returns the signing
// key, which chunk and trailer signatures reuse.
func (v *Verifier) checkSignature(r *http.Request, s *signed, secret string) ([]byte, error) {
	if err := checkUnsignedHeaders(r, s.signedHeaders); err != nil {
		return nil, err
	}
	key := signingKey(secret, s.cred.date, s.cred.region)
	canon := canonicalRequest(r, s.query, s.signedHeaders, s.payloadHash)
	sts := stringToSign(s.amzDate, s.cred.scope(), canon)
	if !hmac.Equal(hmacSHA256(key, sts), s.signature) {
		return nil, signatureMismatch(s.cred.accessKey, sts, hex.EncodeToString(s.signature), canon)
	}
	return key, nil
}

// checkUnsignedHeaders refuses required headers left out of the
// signature: x-amz-content-sha256 and x-amz-date (which the signature
// must bind) and every other x-amz-* header, to which S3 gives meaning
// (metadata, ACLs, checksums) that an intermediary must not be able to
// add. Host is enforced by parseSignedHeaders.
func checkUnsignedHeaders(r *http.Request, names []string) error {
	signed := make(map[string]bool, len(names))
	for _, n := range names {
		signed[n] = true
	}
	var missing []string
	for k := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") && !signed[lk] {
			missing = append(missing, lk)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return notSigned(missing)
}

// checkToken refuses a session token: every key is a permanent one, so
// S3 would find any token invalid for it.
func checkToken(tokens []string) error {
	if len(tokens) > 0 {
		return ErrInvalidToken
	}
	return nil
}

// checkSkew refuses a request dated further than the allowed skew from
// the server's clock, with the times S3 reports; sent is the date as the
// request carried it.
func (v *Verifier) checkSkew(t time.Time, sent string) error {
	now := v.now()
	if d := now.Sub(t); d > v.maxSkew() || d < -v.maxSkew() {
		return &Error{Err: ErrRequestTimeTooSkewed, RequestTime: clip(sent, 64), ServerTime: now.UTC(), MaxSkew: v.maxSkew(),
			Detail: fmt.Sprintf("request time is %s from server time", d.Round(time.Second))}
	}
	return nil
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return defaultMaxSkew
}

func hasParam(q []param, key string) bool {
	for _, p := range q {
		if p.key == key {
			return true
		}
	}
	return false
}
