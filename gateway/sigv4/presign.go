package sigv4

import (
	"fmt"
	"net/http"
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
	secret, err := v.lookup(s)
	if err != nil {
		return nil, err
	}
	now := v.now()
	if s.t.After(now.Add(v.maxSkew())) {
		return nil, fmt.Errorf("%w: presigned date %s is in the future", ErrRequestTimeTooSkewed, s.amzDate)
	}
	if now.After(s.t.Add(expires)) {
		return nil, fmt.Errorf("%w: at %s", ErrExpired, s.t.Add(expires).Format(time.RFC3339))
	}
	key, err := v.checkSignature(r, s, secret)
	if err != nil {
		return nil, err
	}
	return newResult(r, s, key, true)
}

// parsePresigned reads the presign parameters; the canonical query is the
// whole query less X-Amz-Signature.
func parsePresigned(q []param) (*signed, time.Duration, error) {
	vals := make(map[string]string, len(presignParams))
	for _, name := range presignParams {
		v, err := singleParam(q, name)
		if err != nil {
			return nil, 0, err
		}
		vals[name] = v
	}
	if a := vals["X-Amz-Algorithm"]; a != algorithm {
		if strings.HasPrefix(a, "AWS4-") {
			return nil, 0, fmt.Errorf("%w: algorithm %.64q", ErrUnsupported, a)
		}
		return nil, 0, malformed("X-Amz-Algorithm %.64q", a)
	}
	secs, ok := parseDecimal(vals["X-Amz-Expires"])
	if !ok || secs < 1 || secs > maxPresignExpires {
		return nil, 0, malformed("X-Amz-Expires %.32q must be 1..%d", vals["X-Amz-Expires"], maxPresignExpires)
	}
	s := &signed{amzDate: vals["X-Amz-Date"], payloadHash: unsignedPayload}
	var err error
	if s.t, err = parseAmzDate(s.amzDate); err != nil {
		return nil, 0, err
	}
	if s.cred, err = parseCredential(vals["X-Amz-Credential"]); err != nil {
		return nil, 0, err
	}
	if s.signedHeaders, err = parseSignedHeaders(vals["X-Amz-SignedHeaders"]); err != nil {
		return nil, 0, err
	}
	if s.signature, err = parseSignature(vals["X-Amz-Signature"]); err != nil {
		return nil, 0, err
	}
	if hasParam(q, "X-Amz-Content-Sha256") {
		if s.payloadHash, err = singleParam(q, "X-Amz-Content-Sha256"); err != nil {
			return nil, 0, err
		}
	}
	for _, p := range q {
		if p.key != "X-Amz-Signature" {
			s.query = append(s.query, p)
		}
	}
	return s, time.Duration(secs) * time.Second, nil
}

// singleParam returns the one value of a query parameter; absence and
// repetition are both malformed.
func singleParam(q []param, key string) (string, error) {
	val, n := "", 0
	for _, p := range q {
		if p.key == key {
			val = p.value
			n++
		}
	}
	if n != 1 {
		return "", malformed("query parameter %s appears %d times", key, n)
	}
	return val, nil
}
