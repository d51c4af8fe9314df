package sigv4

import (
	"fmt"
	"strings"
	"time"
)

// Error is an authentication failure carrying what S3 puts in its error
// document beside the code: the message clients and people read, and the
// elements some clients act on (s3cmd and the SDKs re-sign for <Region>).
// It wraps one of the sentinels of api.go, which picks the S3 code.
type Error struct {
	Err     error  // sentinel
	Message string // S3's <Message>; "" keeps the code's default
	// Region is the region requests must be signed for (<Region>), set
	// when the client signed for another one.
	Region string
	// HeadersNotSigned lists required headers missing from
	// SignedHeaders (<HeadersNotSigned>), comma-separated.
	HeadersNotSigned string
	// Expires and ServerTime date an expired presigned URL
	// (<Expires>, <ServerTime>); XAmzExpires is its X-Amz-Expires.
	Expires, ServerTime time.Time
	XAmzExpires         string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newError(sentinel error, format string, args ...any) *Error {
	return &Error{Err: sentinel, Message: fmt.Sprintf(format, args...)}
}

// headerMalformed is AuthorizationHeaderMalformed with S3's prefix.
func headerMalformed(detail string) *Error {
	return newError(ErrMalformed, "The authorization header is malformed; %s", detail)
}

// queryMalformed is AuthorizationQueryParametersError.
func queryMalformed(format string, args ...any) *Error {
	return newError(ErrMalformedQuery, format, args...)
}

// formError is a parse failure whose S3 message depends on the form the
// request came in: header for the Authorization header
// (AuthorizationHeaderMalformed, after S3's prefix), query for a presigned
// URL (AuthorizationQueryParametersError).
type formError struct{ header, query string }

func (e *formError) Error() string { return e.header }

// credentialError is a malformed credential scope; S3 words it alike in
// both forms.
func credentialError(format string, args ...any) *formError {
	detail := fmt.Sprintf(format, args...)
	return &formError{header: detail, query: "Error parsing the X-Amz-Credential parameter; " + detail}
}

// asHeaderError and asQueryError give a formError the message of the form
// it came in; other errors pass through.
func asHeaderError(err error) error {
	if fe, ok := err.(*formError); ok {
		return headerMalformed(fe.header)
	}
	return err
}

func asQueryError(err error) error {
	if fe, ok := err.(*formError); ok {
		return queryMalformed("%s", fe.query)
	}
	return err
}

func errCredentialMalformed() *formError {
	return credentialError(`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`)
}

// wrongRegion is S3's answer to a credential scoped to another region,
// with the region to use.
func wrongRegion(got, want string, query bool) *Error {
	detail := fmt.Sprintf("the region '%s' is wrong; expecting '%s'", clip(got, 64), want)
	var e *Error
	if query {
		e = queryMalformed("Error parsing the X-Amz-Credential parameter; %s", detail)
	} else {
		e = headerMalformed(detail)
	}
	e.Region = want
	return e
}

// notSigned is S3's answer to required headers left out of SignedHeaders.
func notSigned(names []string) *Error {
	e := newError(ErrUnsignedHeaders, "There were headers present in the request which were not signed")
	e.HeadersNotSigned = strings.Join(names, ", ")
	return e
}

// invalidDate is S3's answer to a request without a usable date.
func invalidDate() *Error {
	return newError(ErrAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
}

// expired is S3's answer to a presigned URL past its expiry.
func expired(at, now time.Time, xAmzExpires string) *Error {
	e := newError(ErrExpired, "Request has expired")
	e.Expires, e.ServerTime, e.XAmzExpires = at.UTC(), now.UTC(), xAmzExpires
	return e
}

// clip bounds client-supplied text echoed into messages.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
