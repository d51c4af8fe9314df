package sigv4

import (
	"crypto/sha256"
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
// spaces, each exactly once. Errors carry the header form's S3 messages.
func parseAuthorization(h string) (authorization, error) {
	var a authorization
	scheme, rest, _ := strings.Cut(h, " ")
	if scheme != algorithm {
		if strings.HasPrefix(scheme, "AWS4-ECDSA-") {
			return a, fmt.Errorf("%w: authorization scheme %.32q", ErrUnsupported, scheme)
		}
		return a, newError(ErrInvalidAuthorization, "Unsupported Authorization Type")
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(rest, ",") {
		f = strings.TrimSpace(f)
		k, v, ok := strings.Cut(f, "=")
		if !ok || seen[k] {
			return a, headerMalformed(fmt.Sprintf("the authorization component %q is malformed.", clip(f, 128)))
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
			err = headerMalformed(fmt.Sprintf("the authorization component %q is malformed.", clip(f, 128)))
		}
		if err != nil {
			return a, asHeaderError(err)
		}
	}
	if len(seen) != 3 {
		return a, headerMalformed("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	return a, nil
}

// parseCredential parses AK/YYYYMMDD/REGION/s3/aws4_request; the access
// key may itself contain slashes. The region is checked by the caller,
// which knows the form's message.
func parseCredential(v string) (credential, error) {
	var c credential
	parts := strings.Split(v, "/")
	n := len(parts)
	if n < 5 {
		return c, errCredentialMalformed()
	}
	c.accessKey = strings.Join(parts[:n-4], "/")
	c.date, c.region = parts[n-4], parts[n-3]
	if c.accessKey == "" || c.region == "" {
		return c, errCredentialMalformed()
	}
	if _, err := time.Parse(scopeDate, c.date); err != nil || len(c.date) != 8 {
		return c, credentialError(`incorrect date format %q. This date in the credential must be in the format "yyyyMMdd".`, clip(c.date, 16))
	}
	if parts[n-2] != service {
		return c, credentialError(`incorrect service %q. This endpoint belongs to "s3".`, clip(parts[n-2], 32))
	}
	if parts[n-1] != terminator {
		return c, credentialError(`incorrect terminal %q. This endpoint uses "aws4_request".`, clip(parts[n-1], 32))
	}
	return c, nil
}

// parseSignedHeaders wants lower-case header names, each once; the list
// is used verbatim in the canonical request, as the client signed it.
// Host must be among them: S3 refuses a signature that does not bind the
// request to its endpoint.
func parseSignedHeaders(v string) ([]string, error) {
	if v == "" {
		return nil, &formError{header: "missing SignedHeaders.", query: "X-Amz-SignedHeaders is empty."}
	}
	names := strings.Split(v, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || seen[n] || !validHeaderName(n) {
			return nil, &formError{
				header: fmt.Sprintf("the authorization component %q is malformed.", "SignedHeaders="+clip(v, 128)),
				query:  fmt.Sprintf("X-Amz-SignedHeaders %q is malformed.", clip(v, 128)),
			}
		}
		seen[n] = true
	}
	if !seen["host"] {
		return nil, notSigned([]string{"host"})
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
	b, err := hex.DecodeString(v)
	if err != nil || len(b) != sha256.Size {
		return nil, &formError{
			header: fmt.Sprintf("the authorization component %q is malformed.", "Signature="+clip(v, 128)),
			query:  "X-Amz-Signature must be 64 hexadecimal digits.",
		}
	}
	return b, nil
}

// parseAmzDate parses the ISO 8601 basic form SigV4 signs, exactly. Dates
// before 1970 are refused, as S3 refuses them.
func parseAmzDate(v string) (time.Time, error) {
	t, err := time.Parse(iso8601Format, v)
	if err != nil || t.Format(iso8601Format) != v || t.Year() < 1970 {
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
