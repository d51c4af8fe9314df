package sigv4

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// credential is the parsed Credential= value: AK/date/region/s3/aws4_request.
type credential struct {
	accessKey, date, region string
}

func (c credential) scope() string {
	return c.date + "/" + c.region + "/" + service + "/" + terminator
}

// authorization is what a signed request claims, whether it came from the
// Authorization header or a presigned query string.
type authorization struct {
	cred          credential
	signedHeaders []string
	signature     []byte // 32 bytes
}

func (a authorization) String() string {
	return algorithm + " Credential=" + a.cred.accessKey + "/" + a.cred.scope() +
		", SignedHeaders=" + strings.Join(a.signedHeaders, ";") +
		", Signature=" + hex.EncodeToString(a.signature)
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// parseAuthorization parses an AWS4-HMAC-SHA256 Authorization header. Its
// three fields may come in any order, separated by commas and optional
// spaces, each exactly once.
func parseAuthorization(h string) (authorization, error) {
	var a authorization
	scheme, rest, _ := strings.Cut(h, " ")
	if scheme != algorithm {
		return a, fmt.Errorf("%w: authorization scheme %.32q", ErrUnsupported, scheme)
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || seen[k] {
			return a, malformed("authorization field %.64q", f)
		}
		seen[k] = true
		var err error
		switch k {
		case "Credential":
			a.cred, err = parseCredential(v)
		case "SignedHeaders":
			a.signedHeaders, err = parseSignedHeaders(v)
		case "Signature":
			a.signature, err = parseSignature(v)
		default:
			err = malformed("unknown authorization field %.64q", k)
		}
		if err != nil {
			return a, err
		}
	}
	if len(seen) != 3 {
		return a, malformed("authorization needs Credential, SignedHeaders and Signature")
	}
	return a, nil
}

func parseCredential(v string) (credential, error) {
	var c credential
	parts := strings.Split(v, "/")
	n := len(parts)
	if n < 5 {
		return c, malformed("credential %.128q", v)
	}
	c.accessKey = strings.Join(parts[:n-4], "/")
	c.date, c.region = parts[n-4], parts[n-3]
	if c.accessKey == "" || c.region == "" {
		return c, malformed("credential %.128q", v)
	}
	if _, err := time.Parse(scopeDate, c.date); err != nil || len(c.date) != 8 {
		return c, malformed("credential date %.16q", c.date)
	}
	if parts[n-2] != service || parts[n-1] != terminator {
		return c, malformed("credential scope %.128q is not for s3", v)
	}
	return c, nil
}

// parseSignedHeaders wants lower-case header names, each once; the list
// is used verbatim in the canonical request, as the client signed it.
func parseSignedHeaders(v string) ([]string, error) {
	if v == "" {
		return nil, malformed("empty SignedHeaders")
	}
	names := strings.Split(v, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || seen[n] || !validHeaderName(n) {
			return nil, malformed("signed header %.64q", n)
		}
		seen[n] = true
	}
	if !seen["host"] {
		return nil, malformed("host is not a signed header")
	}
	return names, nil
}

// validHeaderName accepts lower-case RFC 7230 token characters.
func validHeaderName(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func parseSignature(v string) ([]byte, error) {
	if len(v) != 64 {
		return nil, malformed("signature length %d", len(v))
	}
	b, err := hex.DecodeString(v)
	if err != nil {
		return nil, malformed("signature is not hex")
	}
	return b, nil
}

// parseAmzDate parses the ISO 8601 basic form SigV4 signs, exactly.
func parseAmzDate(v string) (time.Time, error) {
	t, err := time.Parse(iso8601Format, v)
	if err != nil || t.Format(iso8601Format) != v {
		return time.Time{}, malformed("date %.32q", v)
	}
	return t, nil
}

// parseDecimal parses a non-negative decimal without sign or spaces.
func parseDecimal(v string) (int64, bool) {
	if v == "" || len(v) > 18 {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
