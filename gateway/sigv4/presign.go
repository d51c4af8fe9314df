package sigv4

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const maxPresignExpires = 7 * 24 * 60 * 60 // seconds, as S3

// presignParams are the X-Amz-* query parameters of a presigned URL.
var presignParams = []string{
	"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date",
	"X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature",
}

func (v *Verifier) verifyPresigned(r *http.Request, q []param) (*Result, error) {
	s, expires, err := parsePresigned(q)
	if err != nil {
		return nil, err
	}
	if err := v.checkScope(s, true); err != nil {
		return nil, err
	}
	secret, err := v.secret(s.cred.accessKey)
	if err != nil {
		return nil, err
	}
	if _, n := paramValue(q, "X-Amz-Security-Token"); n > 0 {
		return nil, ErrInvalidToken
	}
	now := v.now()
	if s.t.After(now.Add(v.maxSkew())) {
		return nil, newError(ErrAccessDenied, "Request is not valid yet")
	}
	if at := s.t.Add(expires); now.After(at) {
		return nil, expired(at, now, strconv.FormatInt(int64(expires/time.Second), 10))
	}
	if err := checkPayloadHash(s.payloadHash); err != nil {
		return nil, err
	}
	key, err := v.checkSignature(r, s, secret)
	if err != nil {
		return nil, err
	}
	return newResult(r, s, key, true)
}

// parsePresigned reads the presign parameters; the canonical query is the
// whole query less X-Amz-Signature. Errors carry S3's messages for the
// query form.
func parsePresigned(q []param) (*signed, time.Duration, error) {
	vals := make(map[string]string, len(presignParams))
	for _, name := range presignParams {
		v, n := paramValue(q, name)
		if n == 0 {
			return nil, 0, queryMalformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
		if n > 1 {
			return nil, 0, queryMalformed("Query parameter %s appears %d times; it must appear once.", name, n)
		}
		vals[name] = v
	}
	if a := vals["X-Amz-Algorithm"]; a != algorithm {
		// S3 names the two algorithms it knows; SigV4a, the second, is
		// one this server does not verify.
		if a == algorithmECDSA {
			return nil, 0, queryMalformed(`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`)
		}
		return nil, 0, queryMalformed(`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256"`)
	}
	secs, err := parseExpires(vals["X-Amz-Expires"])
	if err != nil {
		return nil, 0, err
	}
	s := &signed{amzDate: vals["X-Amz-Date"], payloadHash: unsignedPayload}
	if s.t, err = parseAmzDate(s.amzDate); err != nil {
		return nil, 0, queryMalformed(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
	}
	if s.cred, err = parseCredential(vals["X-Amz-Credential"]); err != nil {
		return nil, 0, asQueryError(err)
	}
	if s.signedHeaders, err = parseSignedHeaders(vals["X-Amz-SignedHeaders"]); err != nil {
		return nil, 0, asQueryError(err)
	}
	if s.signature, err = parseSignature(vals["X-Amz-Signature"]); err != nil {
		return nil, 0, asQueryError(err)
	}
	if v, n := paramValue(q, "X-Amz-Content-Sha256"); n > 1 {
		return nil, 0, queryMalformed("Query parameter X-Amz-Content-Sha256 appears %d times; it must appear once.", n)
	} else if n == 1 {
		s.payloadHash = v
	}
	for _, p := range q {
		if p.key != "X-Amz-Signature" {
			s.query = append(s.query, p)
		}
	}
	return s, time.Duration(secs) * time.Second, nil
}

// parseExpires reads X-Amz-Expires: seconds, 0 to a week.
func parseExpires(v string) (int64, error) {
	secs, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, queryMalformed("X-Amz-Expires should be a number")
	case strings.HasPrefix(v, "-"):
		return 0, queryMalformed("X-Amz-Expires must be non-negative")
	case err != nil || secs > maxPresignExpires:
		return 0, queryMalformed("X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than %d seconds", maxPresignExpires)
	}
	return secs, nil
}

// paramValue returns the first value of a query parameter and how many
// times it appears.
func paramValue(q []param, key string) (string, int) {
	val, n := "", 0
	for _, p := range q {
		if p.key == key {
			if n == 0 {
				val = p.value
			}
			n++
		}
	}
	return val, n
}
