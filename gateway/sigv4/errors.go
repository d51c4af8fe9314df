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
	// AccessKeyID is the access key the request named (<AWSAccessKeyId>)
	// when S3 echoes it: an unknown key, a signature that does not match.
	AccessKeyID string
	// ArgumentName and ArgumentValue name the header an InvalidArgument
	// refuses and its value as sent.
	ArgumentName, ArgumentValue string
	// ClientSHA256 and ComputedSHA256 are the x-amz-content-sha256 sent
	// and the payload's actual hash (<ClientComputedContentSHA256>,
	// <S3ComputedContentSHA256>).
	ClientSHA256, ComputedSHA256 string
	// Chunk is the 1-based number of an aws-chunked chunk below the
	// minimum size that was not the last one, BadChunkSize its size.
	Chunk        int
	BadChunkSize int64
	// RequestTime is the date of a request outside the allowed skew, as
	// sent (<RequestTime>, beside <ServerTime> and
	// <MaxAllowedSkewMilliseconds>); MaxSkew is that skew.
	RequestTime string
	MaxSkew     time.Duration
	// StringToSign, SignatureProvided and CanonicalRequest explain a
	// signature that does not match, as S3 does, so a client can compare
	// what it signed with what the server expected.
	StringToSign, SignatureProvided, CanonicalRequest string
	// Detail is for logs only: what exactly was wrong.
	Detail string
}

func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
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

// signatureMismatch is S3's SignatureDoesNotMatch with what the server
// signed, for the client to compare with its own.
func signatureMismatch(accessKey, sts, provided, canon string) *Error {
	return &Error{Err: ErrSignatureDoesNotMatch, AccessKeyID: clip(accessKey, 128), StringToSign: sts,
		SignatureProvided: clip(provided, 128), CanonicalRequest: canon}
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
