package sigv4

import (
	"crypto/hmac"
	"fmt"
	"net/http"
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
// api.go.
func (v *Verifier) Verify(r *http.Request) (*Result, error) {
	auth := r.Header.Values("Authorization")
	q := parseQuery(r.URL.RawQuery)
	presigned := hasParam(q, "X-Amz-Algorithm") || hasParam(q, "X-Amz-Credential") ||
		hasParam(q, "X-Amz-Signature")
	switch {
	case len(auth) > 1:
		return nil, malformed("more than one Authorization header")
	case len(auth) == 1 && presigned:
		return nil, malformed("both an Authorization header and a presigned query")
	case len(auth) == 1:
		return v.verifyHeader(r, auth[0], q)
	case presigned:
		return v.verifyPresigned(r, q)
	case hasParam(q, "AWSAccessKeyId") || hasParam(q, "Signature"):
		return v.verifyV2Query(r)
	}
	return nil, ErrMissingAuth
}

func (v *Verifier) verifyHeader(r *http.Request, h string, q []param) (*Result, error) {
	if strings.HasPrefix(h, "AWS ") {
		return v.verifyV2Header(r, h)
	}
	a, err := parseAuthorization(h)
	if err != nil {
		return nil, err
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, malformed("missing x-amz-content-sha256")
	}
	amzDate, t, err := requestDate(r)
	if err != nil {
		return nil, err
	}
	s := &signed{authorization: a, amzDate: amzDate, t: t, query: q, payloadHash: payload}
	secret, err := v.lookup(s)
	if err != nil {
		return nil, err
	}
	if d := v.now().Sub(t); d > v.maxSkew() || d < -v.maxSkew() {
		return nil, fmt.Errorf("%w: request time %s is %s from server time", ErrRequestTimeTooSkewed, amzDate, d.Round(time.Second))
	}
	key, err := v.checkSignature(r, s, secret)
	if err != nil {
		return nil, err
	}
	return newResult(r, s, key, false)
}

// requestDate reads x-amz-date, or failing that the Date header.
func requestDate(r *http.Request) (string, time.Time, error) {
	if d := r.Header.Get("X-Amz-Date"); d != "" {
		t, err := parseAmzDate(d)
		return d, t, err
	}
	if d := r.Header.Get("Date"); d != "" {
		t, err := http.ParseTime(d)
		if err != nil {
			return "", time.Time{}, malformed("Date header %.64q", d)
		}
		t = t.UTC()
		return t.Format(iso8601Format), t, nil
	}
	return "", time.Time{}, malformed("no x-amz-date or Date header")
}

// lookup checks the credential scope against the Verifier and finds the
// secret key.
func (v *Verifier) lookup(s *signed) (string, error) {
	if v.Region != "" && s.cred.region != v.Region {
		return "", malformed("region %.64q is wrong; expecting %q", s.cred.region, v.Region)
	}
	if s.cred.date != s.t.UTC().Format(scopeDate) {
		return "", malformed("credential date %s does not match request date %s", s.cred.date, s.amzDate)
	}
	if v.Lookup == nil {
		return "", ErrInvalidAccessKeyID
	}
	secret, ok := v.Lookup(s.cred.accessKey)
	if !ok {
		return "", fmt.Errorf("%w: %.128q", ErrInvalidAccessKeyID, s.cred.accessKey)
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
	want := hmacSHA256(key, stringToSign(s.amzDate, s.cred.scope(), canon))
	if !hmac.Equal(want, s.signature) {
		return nil, ErrSignatureDoesNotMatch
	}
	return key, nil
}

// checkUnsignedHeaders refuses x-amz-* headers left out of the signature:
// S3 gives them meaning (metadata, ACLs, checksums), so an intermediary
// must not be able to add them.
func checkUnsignedHeaders(r *http.Request, names []string) error {
	for k := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") {
			continue
		}
		found := false
		for _, n := range names {
			if n == lk {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%w: %s", ErrUnsignedHeaders, lk)
		}
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
