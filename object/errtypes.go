package object

import "fmt"

// Typed errors carry what S3 reports beside the error code (the part a
// CompleteMultipartUpload refused, the digests that differ). Each wraps
// its sentinel, so errors.Is keeps working for callers that only branch.

// PartError is a part a CompleteMultipart refused. Err is ErrInvalidPart
// (no such part, or another ETag) or ErrEntityTooSmall (a part other than
// the last under Min bytes).
type PartError struct {
	Err    error
	Number int
	ETag   string // as the request named it, without quotes
	Size   int64  // the part's size (ErrEntityTooSmall)
	Min    int64  // the smallest size allowed (ErrEntityTooSmall)
}

func (e *PartError) Error() string {
	if e.Min > 0 {
		return fmt.Sprintf("%v: part %d is %d bytes, under %d", e.Err, e.Number, e.Size, e.Min)
	}
	return fmt.Sprintf("%v: part %d etag %s", e.Err, e.Number, e.ETag)
}

func (e *PartError) Unwrap() error { return e.Err }

// DigestError is a body whose MD5 is not the Content-MD5 the request
// stated. It wraps ErrBadDigest.
type DigestError struct {
	Want, Got []byte
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("%v: content-md5 %x, body %x", ErrBadDigest, e.Want, e.Got)
}

func (e *DigestError) Unwrap() error { return ErrBadDigest }

// SizeMismatchError is a CompleteMultipart whose stated object size
// (x-amz-mp-object-size) is not the sum of the chosen parts. It wraps
// ErrInvalidObjectSize.
type SizeMismatchError struct {
	Stated, Computed int64
}

func (e *SizeMismatchError) Error() string {
	return fmt.Sprintf("%v: stated %d bytes, parts sum to %d", ErrInvalidObjectSize, e.Stated, e.Computed)
}

func (e *SizeMismatchError) Unwrap() error { return ErrInvalidObjectSize }
