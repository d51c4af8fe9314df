package object

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tessera/checksum"
	"tessera/meta"
)

// Errors the gateway maps to S3 error codes. Bucket and object absence are
// the meta sentinels, re-exported so callers need one import.
var (
	ErrBucketNotFound = meta.ErrBucketNotFound
	ErrBucketExists   = meta.ErrBucketExists
	ErrBucketNotEmpty = meta.ErrBucketNotEmpty
	ErrObjectNotFound = meta.ErrNotFound
	ErrUploadNotFound = meta.ErrUploadNotFound
	// ErrInvalidArgument: the peers refused the request as malformed. It
	// is never retried into ErrQuorum, since every peer refuses it alike.
	ErrInvalidArgument = meta.ErrInvalidArgument

	// ErrQuorum: too few peers answered or agreed (S3: 503 SlowDown).
	ErrQuorum = errors.New("quorum not reached")
	// ErrInsufficientStorage: a write missed its quorum because too many
	// of its peers are out of space (S3-style 507). A QuorumError matches
	// it as well as ErrQuorum; see QuorumError.outOfSpace.
	ErrInsufficientStorage = errors.New("insufficient storage")
	// ErrInvalidPart: a completed part is unknown or its ETag differs.
	ErrInvalidPart = errors.New("invalid part")
	// ErrInvalidPartOrder: parts not in ascending order.
	ErrInvalidPartOrder = errors.New("invalid part order")
	// ErrEntityTooSmall: a part other than the last is under MinPartSize.
	ErrEntityTooSmall = errors.New("entity too small")
	// ErrEntityTooLarge: an object or part over the size limits.
	ErrEntityTooLarge = errors.New("entity too large")
	// ErrInvalidStorageClass: unknown x-amz-storage-class.
	ErrInvalidStorageClass = errors.New("invalid storage class")
	// ErrCodeTooWide: the code needs more peers than the ring has.
	ErrCodeTooWide = errors.New("erasure code wider than the cluster")
	// ErrNotReady: the ring is narrower than the default code, so the
	// cluster is still assembling (or has lost peers from its layout) and
	// no write can be judged yet. It is an ErrQuorum: worth retrying, never
	// the request's fault.
	ErrNotReady = fmt.Errorf("cluster not ready: %w", ErrQuorum)
	// ErrIncompleteBody: the body ended before the declared size.
	ErrIncompleteBody = errors.New("incomplete body")
	// ErrInvalidRange: the requested range is not satisfiable.
	ErrInvalidRange = errors.New("invalid range")
)

// S3 limits.
const (
	MinPartSize    = 5 << 20
	MaxPartSize    = 5 << 30
	MaxPartNumber  = 10000
	MaxObjectSize  = 5 << 40
	MaxPutSize     = 5 << 30
	DefaultMaxKeys = 1000
)

// BucketInfo describes a bucket.
type BucketInfo struct {
	Name    string
	Created time.Time
}

// ObjectInfo describes an object version as S3 reports it.
type ObjectInfo struct {
	Bucket       string
	Key          string
	Size         int64
	ETag         string // hex, no quotes; multipart "hex-N"
	ModTime      time.Time
	ContentType  string
	UserMeta     map[string]string // lowercase names without "x-amz-meta-"
	Headers      map[string]string // other stored headers (Cache-Control, ...)
	StorageClass string            // "STANDARD", "REDUCED_REDUNDANCY" or a --storage-class name
	Parts        int               // number of parts (1 for single PUT)
	// PartSizes are the parts' sizes in order (GET ?partNumber=N).
	PartSizes []int64
	// Checksum is the object's checksum (zero for objects written before
	// every object had one); PartChecksums are its algorithm's value for
	// each part, in order ("" where a part has none).
	Checksum      ChecksumInfo
	PartChecksums []string
	// DeleteMarker marks a versioned bucket's delete marker (PutOptions).
	DeleteMarker bool
}

// Current names a key's current version for a conditional write.
type Current struct {
	ETag string
	// Stored is the stored key holding it: the key itself, or one of its
	// version keys (meta.VersionKey) in a versioned bucket.
	Stored string
}

// CurrentFunc reports a key's current version, and whether it has one (a
// delete marker is none). In a versioned bucket a write goes to a new
// version key while the current version is the latest of several stored
// keys, which only the versioning view above this layer can name, so the
// gateway passes one for a conditional write there.
type CurrentFunc func(ctx context.Context) (cur Current, exists bool, err error)

// PutOptions carry what a PUT or multipart create stores besides the bytes.
type PutOptions struct {
	ContentType  string
	UserMeta     map[string]string
	Headers      map[string]string
	StorageClass string // "" means STANDARD
	// ContentMD5, when set, must equal the body's MD5 or the write fails
	// with ErrBadDigest before anything is committed.
	ContentMD5 []byte
	// IfNoneMatch "*" commits only when the key has no current version;
	// IfMatch (an ETag without quotes) only when the current version has
	// that ETag. Otherwise the write fails with ErrPreconditionFailed (or
	// ErrObjectNotFound for IfMatch on a missing key). See checkPutCondition
	// for the race this leaves.
	IfNoneMatch string
	IfMatch     string
	// IfStored commits only while the current version is the one stored
	// under this key, so a newer version with the same bytes (and ETag)
	// stops the write too; it fails as IfMatch does.
	IfStored string
	// Current, when set, names the key's current version for IfMatch and
	// IfNoneMatch instead of the key written.
	Current CurrentFunc
	// ChecksumAlgorithm and ChecksumType are a multipart upload's object
	// checksum (x-amz-checksum-algorithm, -type); the type defaults to
	// the algorithm's DefaultType. A PUT's checksum comes from its body.
	ChecksumAlgorithm checksum.Algorithm
	ChecksumType      checksum.Type
	// DeleteMarker stores a versioned bucket's delete marker under a
	// version key (meta.VersionKey): an empty, live version that reads
	// and lists as one, and that the tombstone collector leaves alone.
	DeleteMarker bool
}

// CopyOptions tune CopyObject.
type CopyOptions struct {
	// Replace, when true, takes metadata from Put instead of the source
	// (x-amz-metadata-directive: REPLACE).
	Replace bool
	Put     PutOptions
	// Tags say where the copy's tags come from.
	Tags CopyTags
	// ChecksumAlgorithm is the copy's checksum (x-amz-checksum-algorithm);
	// "" keeps the source's algorithm, or S3's default when it has none.
	// The copy's checksum is always computed over the bytes copied.
	ChecksumAlgorithm checksum.Algorithm
}

// CopyTags is S3's x-amz-tagging-directive, which is independent of the
// metadata directive: the copy keeps the source's tags (Replace false)
// or takes Value (Replace true). Header names the stored header that
// holds the tags; empty leaves the tags to the metadata directive.
type CopyTags struct {
	Header  string
	Replace bool
	Value   string
}

// ListOptions select a page of ListObjects.
type ListOptions struct {
	Prefix    string
	Delimiter string
	// After: return keys (and common prefixes) strictly greater than this
	// (start-after or the decoded continuation token).
	After string
	// MaxKeys caps the page: 0 gives an empty, untruncated page (as S3
	// does for max-keys=0); negative or over DefaultMaxKeys means
	// DefaultMaxKeys.
	MaxKeys int
}

// ListResult is one page of a listing.
type ListResult struct {
	Objects     []ObjectInfo
	Prefixes    []string
	IsTruncated bool
	// NextAfter is the last key or common prefix returned; pass it as After
	// to continue.
	NextAfter string
}

// PartInfo describes an uploaded part.
type PartInfo struct {
	Number  int
	Size    int64
	ETag    string
	ModTime time.Time
	// Checksums are the part's checksums (lowercase algorithm → base64).
	Checksums map[string]string
}

// CompletePart is one entry of a CompleteMultipartUpload body.
type CompletePart struct {
	Number int
	ETag   string // hex, quotes already stripped
	// Checksums are the body's ChecksumXXX values (lowercase algorithm →
	// base64); each must match what the part was uploaded with.
	Checksums map[string]string
}

// ListPartsResult is one page of ListParts.
type ListPartsResult struct {
	Parts                []PartInfo
	IsTruncated          bool
	NextPartNumberMarker int
	StorageClass         string
	// ChecksumAlgorithm and ChecksumType are the upload's ("" none).
	ChecksumAlgorithm checksum.Algorithm
	ChecksumType      checksum.Type
}

// ErrBadDigest: the body's MD5 differs from Content-MD5.
var ErrBadDigest = errors.New("bad digest")

// Errors added with the Layer.
var (
	// ErrBodyTooLong: the body carried more bytes than its declared size.
	ErrBodyTooLong = errors.New("body longer than declared size")
	// ErrCopyToSelf: a copy onto its own source without replacing its
	// metadata (S3: InvalidRequest).
	ErrCopyToSelf = errors.New("copy onto itself without changing anything")
	// ErrInvalidPartNumber: a part number outside 1..MaxPartNumber.
	ErrInvalidPartNumber = errors.New("invalid part number")
	// ErrInvalidChecksumConfig: a multipart checksum algorithm with a
	// type it does not allow, or a type without an algorithm.
	ErrInvalidChecksumConfig = errors.New("invalid checksum algorithm and type")
	// ErrInvalidObjectSize: a CompleteMultipart's stated object size is
	// not the size of the parts it names (see SizeMismatchError).
	ErrInvalidObjectSize = errors.New("object size differs from the parts")
)
