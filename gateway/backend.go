package gateway

import (
	"context"
	"io"

	"tessera/object"
)

// Backend is the object layer as the S3 handlers see it; *object.Layer
// implements it, and handler tests use an in-memory fake.
type Backend interface {
	MakeBucket(ctx context.Context, bucket string) error
	HeadBucket(ctx context.Context, bucket string) (object.BucketInfo, error)
	DeleteBucket(ctx context.Context, bucket string) error
	ListBuckets(ctx context.Context) ([]object.BucketInfo, error)

	// PutObject stores r (size bytes, or -1 when unknown) under key. An error
	// from r (a bad chunk signature, say) aborts the write and is returned
	// wrapped, so errors.Is finds it.
	PutObject(ctx context.Context, bucket, key string, r io.Reader, size int64, opts object.PutOptions) (object.ObjectInfo, error)
	// GetObject resolves the current version and calls start with its info.
	// start checks preconditions and the range, writes the response headers
	// and returns where the body goes and which bytes (length -1: to the
	// end). An error from start is returned unchanged and nothing is read.
	GetObject(ctx context.Context, bucket, key string, start func(object.ObjectInfo) (w io.Writer, off, length int64, err error)) error
	HeadObject(ctx context.Context, bucket, key string) (object.ObjectInfo, error)
	// DeleteObjectWith succeeds when the key does not exist (S3
	// semantics) but fails with object.ErrBucketNotFound when the bucket
	// does not. opts may make it conditional and carry the caller's
	// consent to lift a governance retention.
	DeleteObjectWith(ctx context.Context, bucket, key string, opts object.DeleteOptions) error
	// DeleteObjects deletes distinct keys as DeleteObjectWith does each
	// without a condition, in one batch, and answers each key's error.
	DeleteObjects(ctx context.Context, bucket string, keys []string, bypassGovernance bool) []error
	ListObjects(ctx context.Context, bucket string, opts object.ListOptions) (object.ListResult, error)
	CopyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts object.CopyOptions) (object.ObjectInfo, error)
	// RewriteObject gives the current version of bucket/key the content
	// type, user metadata and headers edit makes from it, keeping its
	// data, storage class and Last-Modified time (tagging, retention,
	// legal hold): a new version of the same bytes, without copying them,
	// of exactly the version edit saw.
	RewriteObject(ctx context.Context, bucket, key string, edit object.Edit) (object.ObjectInfo, error)

	NewMultipart(ctx context.Context, bucket, key string, opts object.PutOptions) (uploadID string, err error)
	PutPart(ctx context.Context, bucket, key, uploadID string, number int, r io.Reader, size int64, contentMD5 []byte) (object.PartInfo, error)
	CompleteMultipart(ctx context.Context, bucket, key, uploadID string, parts []object.CompletePart, opts object.CompleteOptions) (object.ObjectInfo, error)
	AbortMultipart(ctx context.Context, bucket, key, uploadID string, opts object.AbortOptions) error
	ListParts(ctx context.Context, bucket, key, uploadID string, marker, maxParts int) (object.ListPartsResult, error)

	// NewVersionID returns the ID of a new version written now: later
	// writes get IDs that sort before it (meta.NewVersionID).
	NewVersionID() string
}
