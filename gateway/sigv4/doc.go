// Package sigv4 authenticates S3 requests signed with AWS Signature
// Version 4, as Amazon S3 checks them on the server side.
//
// Verify accepts the three SigV4 forms S3 clients use:
//
//   - the Authorization header (AWS4-HMAC-SHA256), with the payload named by
//     x-amz-content-sha256: a hex SHA-256, UNSIGNED-PAYLOAD, or one of the
//     aws-chunked streaming modes (STREAMING-AWS4-HMAC-SHA256-PAYLOAD,
//     ...-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER);
//   - presigned query strings (X-Amz-Algorithm, X-Amz-Credential, ...);
//   - flexible checksums (x-amz-checksum-* headers or trailers).
//
// It also accepts the legacy Signature Version 2 (HMAC-SHA1) in its header
// form ("Authorization: AWS key:signature") and its presigned query form
// (AWSAccessKeyId, Expires, Signature), path style and virtual-hosted
// (Verifier.Domains), with an unsigned payload; and VerifyPolicy checks
// the V4 or V2 signature of a browser POST upload's policy document.
//
// Failures are S3's: each error wraps a sentinel that picks the S3 code,
// and most are an *Error with S3's message and the elements clients act
// on (<Region> when a request was signed for another region, so s3cmd and
// the SDKs re-sign; <HeadersNotSigned>).
//
// Contract and invariants:
//
//   - Verify only looks at the request line and headers; it never reads the
//     body. Everything that depends on the payload (payload SHA-256, chunk
//     signatures, trailer signature, checksums, decoded length) is checked by
//     Result.Body while it is read, and a failure is reported by a Read that
//     returns a sentinel error instead of io.EOF. A caller must therefore
//     treat the payload as untrusted until Body has returned io.EOF, and
//     must discard what it stored if any Read fails.
//   - The canonical request follows S3's rules, not the generic SigV4 ones:
//     each path segment is URI-encoded exactly once from its decoded form
//     ('/' kept, no double encoding, no "." or ".." normalisation), and the
//     query is sorted by encoded name then encoded value.
//   - The aws-chunked decoder is strict and bounded, and answers as S3: a
//     body it cannot frame (a chunk-size line or a trailer line longer than
//     maxLineLen, a chunk larger than MaxChunkSize, a missing CRLF or
//     trailer signature, bytes after the final chunk) and a decoded length
//     differing from x-amz-decoded-content-length fail with ErrChunk; a
//     chunk under 8 KiB followed by another with ErrChunkSize; trailers
//     other than the one x-amz-trailer declared with ErrMalformedTrailer.
//     It holds at most one bufio buffer and one running hash per stream;
//     chunk data is streamed through, never buffered whole.
//   - Signatures are compared with hmac.Equal.
//
// All errors wrap one of the sentinels in api.go, which the gateway maps to
// S3 error codes. The package starts no goroutines and imports no other
// package of this module except the pure checksum package, which names
// the algorithms. A Verifier is safe for concurrent use; a Result's Body
// is not.
package sigv4
