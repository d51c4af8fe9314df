package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
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

// authComponents are the fields of an AWS4-HMAC-SHA256 Authorization
// header, in the order S3 reports a missing one.
var authComponents = []string{"Credential", "SignedHeaders", "Signature"}

// parseAuthorization parses an AWS4-HMAC-SHA256 Authorization header. Its
// three fields may come in any order, separated by commas and optional
// spaces, each exactly once. Errors carry the header form's S3 messages,
// in S3's order: the scheme, the components' shape, a missing one, then
// each one's value.
func parseAuthorization(h string) (authorization, error) {
	var a authorization
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok {
		return a, invalidAuthHeader("Authorization header is invalid -- one and only one ' ' (space) required.", h)
	}
	if scheme != algorithm {
		if strings.HasPrefix(scheme, "AWS4-ECDSA-") {
			return a, fmt.Errorf("%w: authorization scheme %.32q", ErrUnsupported, scheme)
		}
		return a, invalidAuthHeader("Unsupported Authorization Type", h)
	}
	fields := strings.Split(rest, ",")
	if len(fields) < len(authComponents) {
		return a, headerMalformed("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	vals := make(map[string]string, len(fields))
	for _, f := range fields {
		f = strings.TrimSpace(f)
		k, v, ok := strings.Cut(f, "=")
		if _, dup := vals[k]; !ok || dup {
			return a, malformedComponent(f)
		}
		vals[k] = v
	}
	for _, k := range authComponents {
		if _, ok := vals[k]; !ok {
			return a, headerMalformed("missing " + k + ".")
		}
	}
	for _, f := range fields {
		if k, _, _ := strings.Cut(strings.TrimSpace(f), "="); !slices.Contains(authComponents, k) {
			return a, malformedComponent(strings.TrimSpace(f))
		}
	}
	var err error
	if a.cred, err = parseCredential(vals["Credential"]); err != nil {
		return a, asHeaderError(err)
	}
	if a.signedHeaders, err = parseSignedHeaders(vals["SignedHeaders"]); err != nil {
		return a, asHeaderError(err)
	}
	if a.signature, err = parseSignature(vals["Signature"]); err != nil {
		return a, asHeaderError(err)
	}
	return a, nil
}

func malformedComponent(f string) *Error {
	return headerMalformed(fmt.Sprintf("the authorization component %q is malformed.", clip(f, 128)))
}

// invalidAuthHeader is S3's InvalidArgument for an Authorization header
// it cannot read, which it echoes whole.
func invalidAuthHeader(msg, h string) *Error {
	e := newError(ErrInvalidAuthorization, "%s", msg)
	e.ArgumentName, e.ArgumentValue = "Authorization", clip(h, 1024)
	return e
}

// parseCredential parses AK/YYYYMMDD/REGION/s3/aws4_request. S3 reports
// the number of parts first, then the service, the terminal and the date,
// in that order whatever else is wrong. The region is checked by the
// caller, which knows the form's message.
func parseCredential(v string) (credential, error) {
	var c credential
	parts := strings.Split(v, "/")
	if len(parts) != 5 || parts[0] == "" || parts[2] == "" {
		return c, errCredentialMalformed()
	}
	c.accessKey, c.date, c.region = parts[0], parts[1], parts[2]
	if parts[3] != service {
		return c, credentialError(`incorrect service %q. This endpoint belongs to "s3".`, clip(parts[3], 32))
	}
	if parts[4] != terminator {
		return c, credentialError(`incorrect terminal %q. This endpoint uses "aws4_request".`, clip(parts[4], 32))
	}
	if _, err := time.Parse(scopeDate, c.date); err != nil || len(c.date) != 8 {
		return c, credentialError(`incorrect date format %q. This date in the credential must be in the format "yyyyMMdd".`, clip(c.date, 16))
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
