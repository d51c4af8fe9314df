package meta

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"tessera/checksum"
)

// Sentinel errors shared by the storage peer, its client and the object layer.
var (
	ErrNotFound       = errors.New("not found")
	ErrBucketNotFound = errors.New("bucket not found")
	ErrBucketExists   = errors.New("bucket already exists")
	ErrBucketNotEmpty = errors.New("bucket not empty")
	ErrUploadNotFound = errors.New("upload not found")
	// ErrStale reports a write whose stamp is older than what the peer holds.
	ErrStale = errors.New("stale version")
	// ErrCorrupt reports a record that failed its checksum or did not parse.
	ErrCorrupt = errors.New("corrupt record")
	// ErrInvalidArgument reports a request a peer refused as malformed (a
	// bad name, upload ID, stamp or part list) without touching anything.
	// Peers validate alike, so every peer refuses the same request.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrDiskFull reports a peer that could not write for lack of space,
	// or refused new data because its free space is below its reserve.
	ErrDiskFull = errors.New("disk full")
	// ErrObjectLocked reports a delete or rewrite of a version that its
	// object lock forbids (a legal hold, or a compliance retention being
	// shortened). Every peer refuses alike, so it is a refusal of the
	// request, as ErrInvalidArgument is.
	ErrObjectLocked = fmt.Errorf("%w: object locked", ErrInvalidArgument)
)

// PeerID names a storage peer; stable across restarts.
type PeerID string

// Code is a Reed-Solomon code: K data shards plus M parity shards.
type Code struct {
	K int `json:"k"`
	M int `json:"m"`
}

// N is the number of shards of the code.
func (c Code) N() int { return c.K + c.M }

func (c Code) String() string { return fmt.Sprintf("%d+%d", c.K, c.M) }

// Valid reports whether the code is usable.
func (c Code) Valid() bool { return c.K >= 1 && c.M >= 0 && c.K+c.M <= 256 }

// ParseCode parses "K+M".
func ParseCode(s string) (Code, error) {
	ks, ms, ok := strings.Cut(strings.TrimSpace(s), "+")
	if !ok {
		return Code{}, fmt.Errorf("code %q: want K+M", s)
	}
	k, err1 := strconv.Atoi(ks)
	m, err2 := strconv.Atoi(ms)
	c := Code{K: k, M: m}
	if err1 != nil || err2 != nil || !c.Valid() {
		return Code{}, fmt.Errorf("code %q: want K+M with K>=1, M>=0, K+M<=256", s)
	}
	return c, nil
}

// WriteQuorum is the number of peers that must commit a write. As in MinIO,
// K suffices when parity is smaller than data, and K+1 otherwise so that two
// disjoint write quorums cannot both exist.
func (c Code) WriteQuorum() int {
	if c.M == 0 {
		return c.K
	}
	if c.K > c.M {
		return c.K
	}
	return c.K + 1
}

// Stamp orders versions of one key: last writer wins. Nanos is the writing
// gateway's hybrid logical clock (object's hlc): its wall clock in
// nanoseconds, pushed past every stamp the gateway has seen, so it is a
// wall-clock reading in the same encoding records have always had. Writer
// breaks ties between gateways.
type Stamp struct {
	Nanos  int64  `json:"nanos"`
	Writer string `json:"writer"`
}

// Less reports whether s is older than o.
func (s Stamp) Less(o Stamp) bool {
	if s.Nanos != o.Nanos {
		return s.Nanos < o.Nanos
	}
	return s.Writer < o.Writer
}

// StaleError is a peer's refusal of a write whose stamp is not newer than
// the record it holds. Held is that record's stamp, so the writer can stamp
// its retry above it. It unwraps to ErrStale.
type StaleError struct {
	Held Stamp
}

func (e *StaleError) Error() string { return fmt.Sprintf("%v: holds %v", ErrStale, e.Held) }

func (e *StaleError) Unwrap() error { return ErrStale }

// HeldStamp returns the stamp a stale refusal reports the peer holds;
// false when err is no such refusal or it did not say (an older peer).
func HeldStamp(err error) (Stamp, bool) {
	var se *StaleError
	if errors.As(err, &se) && !se.Held.IsZero() {
		return se.Held, true
	}
	return Stamp{}, false
}

// IsZero reports whether s is unset.
func (s Stamp) IsZero() bool { return s.Nanos == 0 && s.Writer == "" }

// String is a file-name-safe, sortable rendering, used to name data dirs.
func (s Stamp) String() string { return fmt.Sprintf("%019d-%s", s.Nanos, safeName(s.Writer)) }

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// Part is one independently erasure-coded segment of an object. A single
// PUT has one part numbered 1; a multipart upload has one per uploaded part.
type Part struct {
	Number int    `json:"number"`
	Size   int64  `json:"size"`
	ETag   string `json:"etag"` // hex MD5 of the part's bytes
	// Checksums are the part's x-amz-checksum-* values (lowercase
	// algorithm → base64): the one the client sent, validated, and the
	// one the object's checksum needs when the client sent another or
	// none (computed over the part's bytes).
	Checksums map[string]string `json:"checksums,omitempty"`
}

// Object is an object's metadata as stored on each of its n peers. Every
// peer holds the same record except ShardIndex and Inline.
type Object struct {
	Bucket  string `json:"bucket"`
	Key     string `json:"key"`
	Stamp   Stamp  `json:"stamp"`
	Deleted bool   `json:"deleted,omitempty"` // tombstone
	// DeleteMarker marks a versioned bucket's delete marker: a live
	// version with no bytes that makes its key read as absent. Unlike a
	// tombstone it is never collected (see VersionKey).
	DeleteMarker bool    `json:"delete_marker,omitempty"`
	Size         int64   `json:"size"`
	ETag         string  `json:"etag"` // hex, without quotes; multipart: "hex-N"
	ContentType  string  `json:"content_type,omitempty"`
	UserMeta     Strings `json:"user_meta,omitempty"` // x-amz-meta-* names, lowercase, without the prefix
	Headers      Strings `json:"headers,omitempty"`   // other stored headers, canonical names
	StorageClass string  `json:"storage_class,omitempty"`
	Code         Code    `json:"code"`
	BlockSize    int     `json:"block_size"`
	Parts        []Part  `json:"parts,omitempty"`
	// Distribution maps shard index to the peer holding it.
	Distribution []PeerID  `json:"distribution"`
	ModTime      time.Time `json:"mod_time"`
	Epoch        uint64    `json:"epoch,omitempty"`
	// ShardIndex is the shard this copy's peer holds.
	ShardIndex int `json:"shard_index"`
	// Inline holds this peer's shard bytes of the single part when the
	// object is small enough to live inside its metadata record (one
	// durable write per peer). Nil for objects stored in shard files.
	Inline []byte `json:"-"`
	// Inlined is true when every peer's shard is in Inline (Inline may be
	// empty for a 0-byte object).
	Inlined bool `json:"inlined,omitempty"`
	// UploadID names the multipart upload this version was completed
	// from, so a repeated CompleteMultipartUpload can be answered.
	UploadID string `json:"upload_id,omitempty"`
}

// Entry is one line of a peer's sorted listing.
type Entry struct {
	Key          string    `json:"key"`
	Stamp        Stamp     `json:"stamp"`
	Deleted      bool      `json:"deleted,omitempty"`
	DeleteMarker bool      `json:"delete_marker,omitempty"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"`
	ModTime      time.Time `json:"mod_time"`
	StorageClass string    `json:"storage_class,omitempty"`
	// ChecksumAlgorithm and ChecksumType name the object's checksum, which
	// S3 lists with each object ("" when it has none).
	ChecksumAlgorithm string `json:"checksum_algorithm,omitempty"`
	ChecksumType      string `json:"checksum_type,omitempty"`
	// Folded marks the last entry a folding listing (FoldEntries) returns
	// under a common prefix: its holder has more keys under that prefix
	// that it did not return.
	Folded bool `json:"folded,omitempty"`
	// Unsettled marks a record whose holder still keeps the versions it
	// replaced (a write not yet known to be on a write quorum).
	Unsettled bool `json:"unsettled,omitempty"`
}

// EntryOf returns the listing line for o.
func EntryOf(o *Object) Entry {
	alg, typ := o.ChecksumKind()
	return Entry{Key: o.Key, Stamp: o.Stamp, Deleted: o.Deleted, DeleteMarker: o.DeleteMarker, Size: o.Size, ETag: o.ETag,
		ModTime: o.ModTime, StorageClass: o.StorageClass, ChecksumAlgorithm: alg, ChecksumType: typ}
}

// Stored headers of an object's checksum, under S3's own names: the
// value in X-Amz-Checksum-<ALGORITHM>, the type in X-Amz-Checksum-Type.
const (
	ChecksumHeaderPrefix = "X-Amz-Checksum-"
	ChecksumTypeHeader   = "X-Amz-Checksum-Type"
)

// ChecksumKind returns the algorithm and type of o's checksum ("" when it
// has none; a checksum stored before types were is FULL_OBJECT). They are
// the checksum package's constants, so listing lines share them.
func (o *Object) ChecksumKind() (algorithm, typ string) { return checksumKind(o.Headers) }

// checksumKind is ChecksumKind of stored headers h.
func checksumKind(h Strings) (algorithm, typ string) {
	for k := range h {
		name, ok := strings.CutPrefix(k, ChecksumHeaderPrefix)
		if !ok || k == ChecksumTypeHeader {
			continue
		}
		a, ok := checksum.Parse(name)
		if !ok {
			continue
		}
		t := checksum.FullObject
		if h[ChecksumTypeHeader] == string(checksum.Composite) {
			t = checksum.Composite
		}
		return string(a), string(t)
	}
	return "", ""
}

// Upload is an in-progress multipart upload as stored on each of its n
// peers. Its placement is fixed at creation so every part lands on the same
// peers with the same shard indexes.
type Upload struct {
	Bucket       string    `json:"bucket"`
	Key          string    `json:"key"`
	UploadID     string    `json:"upload_id"`
	Initiated    time.Time `json:"initiated"`
	ContentType  string    `json:"content_type,omitempty"`
	UserMeta     Strings   `json:"user_meta,omitempty"`
	Headers      Strings   `json:"headers,omitempty"`
	StorageClass string    `json:"storage_class,omitempty"`
	Code         Code      `json:"code"`
	BlockSize    int       `json:"block_size"`
	Distribution []PeerID  `json:"distribution"`
	ShardIndex   int       `json:"shard_index"`
	// ChecksumAlgorithm and ChecksumType are the object checksum the
	// upload was created for (x-amz-checksum-algorithm, -type: "CRC32",
	// "COMPOSITE", ...); every part carries a checksum of that algorithm.
	// Empty for an upload created without: its object gets S3's default,
	// a FULL_OBJECT CRC64NVME.
	ChecksumAlgorithm string `json:"checksum_algorithm,omitempty"`
	ChecksumType      string `json:"checksum_type,omitempty"`
	// Parts is filled by the peer when the upload is read back: the parts
	// committed so far, sorted by number.
	Parts []Part `json:"parts,omitempty"`
}

// Bucket is a bucket record, stored on every peer.
type Bucket struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}
