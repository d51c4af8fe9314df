package sigv4

import (
	"errors"
	"io"
	"time"

	"tessera/checksum"
)

// Errors returned by Verify and by the body readers it hands out. The
// gateway maps each to its S3 error code (in parentheses).
var (
	ErrMissingAuth           = errors.New("anonymous request")                      // AccessDenied
	ErrInvalidAccessKeyID    = errors.New("unknown access key")                     // InvalidAccessKeyId
	ErrSignatureDoesNotMatch = errors.New("signature does not match")               // SignatureDoesNotMatch
	ErrRequestTimeTooSkewed  = errors.New("request time too skewed")                // RequestTimeTooSkewed
	ErrExpired               = errors.New("presigned request expired")              // AccessDenied ("Request has expired")
	ErrMalformed             = errors.New("malformed authorization header")         // AuthorizationHeaderMalformed
	ErrMalformedQuery        = errors.New("malformed presigned query")              // AuthorizationQueryParametersError
	ErrInvalidAuthorization  = errors.New("unreadable authorization")               // InvalidArgument (also x-amz-content-sha256)
	ErrAccessDenied          = errors.New("access denied")                          // AccessDenied (bad date, V2 query, not yet valid)
	ErrMissingHeader         = errors.New("missing required header")                // InvalidRequest
	ErrUnsupported           = errors.New("unsupported signing scheme")             // NotImplemented
	ErrContentSHA256Mismatch = errors.New("x-amz-content-sha256 mismatch")          // XAmzContentSHA256Mismatch
	ErrChunk                 = errors.New("malformed aws-chunked body")             // IncompleteBody
	ErrChecksumMismatch      = errors.New("checksum mismatch")                      // BadDigest
	ErrInvalidChecksum       = errors.New("invalid checksum header or trailer")     // InvalidRequest
	ErrUnsignedHeaders       = errors.New("required header present but not signed") // AccessDenied
	ErrInvalidToken          = errors.New("session token for a permanent key")      // InvalidToken
	ErrMalformedTrailer      = errors.New("malformed aws-chunked trailer")          // MalformedTrailerError
	ErrChunkSize             = errors.New("aws-chunked chunk too small")            // InvalidChunkSizeError
	ErrMissingLength         = errors.New("unreadable decoded content length")      // MissingContentLength
)

// Verifier authenticates S3 requests signed with AWS Signature Version 4:
// the Authorization header, presigned query strings, and aws-chunked bodies.
// It is safe for concurrent use.
type Verifier struct {
	// Region is the region clients must sign for (AWS's
	// AuthorizationHeaderMalformed otherwise); empty accepts any.
	Region string
	// Lookup returns the secret key of an access key.
	Lookup func(accessKey string) (secret string, ok bool)
	// Now defaults to time.Now.
	Now func() time.Time
	// MaxSkew defaults to 15 minutes, as AWS.
	MaxSkew time.Duration
	// Domains are the hosts under which requests are virtual-hosted
	// (Host BUCKET.DOMAIN): a Signature Version 2 string to sign then
	// starts its resource with /BUCKET. Empty means path style only.
	Domains []string
}

// Result is an authenticated request.
type Result struct {
	AccessKey string
	// Body replaces r.Body: it yields the decoded payload and fails its
	// final Read (never returning io.EOF first) when a chunk signature,
	// the payload SHA-256, or a checksum does not match.
	Body io.ReadCloser
	// Size is the decoded payload length, or -1 when unknown.
	Size int64
	// Checksums holds validated x-amz-checksum-* values (algorithm name
	// lowercase, e.g. "crc32c" → base64 value), from headers or trailers,
	// available once Body has returned io.EOF.
	Checksums map[string]string
	// Declared is the algorithm of the body checksum the request carries
	// in a header or names in x-amz-trailer, known before Body is read;
	// "" when it carries none.
	Declared checksum.Algorithm
}
