package object

import (
	"context"
	"io"
	"time"

	"tessera/meta"
)

// ShardClient is what the object layer needs from one storage peer.
// peer.Client implements it over the peer's authenticated shard API.
// Errors that callers branch on wrap the meta sentinels (meta.ErrNotFound,
// meta.ErrBucketNotFound, meta.ErrStale, ...); anything else is a transport
// or disk failure of that peer. Every method is safe for concurrent use.
type ShardClient interface {
	// Buckets.
	MakeBucket(ctx context.Context, b meta.Bucket) error // meta.ErrBucketExists if present
	StatBucket(ctx context.Context, bucket string) (meta.Bucket, error)
	// DeleteBucket removes the bucket with everything the peer holds in it,
	// uploads in progress included; meta.ErrBucketNotEmpty if the peer
	// holds any live (non-tombstone) object in it.
	DeleteBucket(ctx context.Context, bucket string) error
	ListBuckets(ctx context.Context) ([]meta.Bucket, error)

	// StageShard streams one shard file to the peer's temp area and fsyncs
	// it. The returned id names it in a later Commit or CommitPart; staged
	// files that are never committed are garbage the peer removes.
	StageShard(ctx context.Context, r io.Reader) (tmpID string, err error)
	// Commit atomically makes o visible on the peer: its staged shard files
	// (staged[i] holds part o.Parts[i]; nil for inlined or deleted objects)
	// move into place, then the record is written (tmp, fsync, rename, fsync
	// dir). A record not newer than the one held fails with meta.ErrStale
	// (a *meta.StaleError naming the held stamp), changes nothing and
	// leaves the staged files for a retry under a newer stamp. A tombstone
	// (o.Deleted) is committed the same way.
	Commit(ctx context.Context, o *meta.Object, staged []string) error
	// CommitTombstones commits tombstones of several distinct keys of
	// bucket (at most meta.MaxBatch) in one durable write: errs[i] is what
	// Commit would answer for os[i] alone; err fails the whole call, with
	// nothing committed. A batch delete costs a peer one call and one
	// fsync instead of one of each per key.
	CommitTombstones(ctx context.Context, bucket string, os []*meta.Object) (errs []error, err error)
	// ReadMeta returns the peer's record for the key, tombstones included,
	// with Inline filled for inlined objects.
	ReadMeta(ctx context.Context, bucket, key string) (*meta.Object, error)
	// ReadVersions returns what ReadMeta does, then the versions the peer
	// keeps for the key, newest first: a commit keeps the version it
	// replaces, record and data, until the new one is settled (Settle),
	// so that a write cut short between its peers' commits leaves the old
	// version whole. It fails as ReadMeta does.
	ReadVersions(ctx context.Context, bucket, key string) ([]*meta.Object, error)
	// Settle tells the peer that version st of the key is on a write
	// quorum of its peers: the versions older than st it keeps may go.
	// A peer that does not hold st yet ignores it.
	Settle(ctx context.Context, bucket, key string, st meta.Stamp) error
	// ReadShard streams length bytes from offset of the shard file of part
	// number part of version stamp. Bytes are returned as stored (per-block
	// checksums included); the caller verifies them.
	ReadShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, error)
	// List returns up to limit entries with key > after and the given
	// prefix, sorted by key, tombstones included; with a delimiter, folded
	// as meta.FoldEntries does (a peer may also ignore the delimiter).
	List(ctx context.Context, bucket, prefix, after string, limit int, delimiter string) ([]meta.Entry, error)
	// ListTombstones returns up to limit of the peer's tombstones in
	// bucket stamped before before, oldest first (by stamp, then key),
	// after the tombstone after (the zero Entry: from the oldest); fewer
	// than limit means no more. It reads only tombstones, whatever the
	// bucket's size: the collector's source.
	ListTombstones(ctx context.Context, bucket string, before time.Time, after meta.Entry, limit int) ([]meta.Entry, error)

	// Multipart uploads. Parts are staged with StageShard first.
	PutUpload(ctx context.Context, u *meta.Upload) error
	// GetUpload returns the upload with the parts committed so far.
	GetUpload(ctx context.Context, bucket, key, uploadID string) (*meta.Upload, error)
	CommitPart(ctx context.Context, bucket, key, uploadID string, p meta.Part, tmpID string) error
	// CompleteUpload commits o (as Commit does) taking the shard files of
	// parts o.Parts from the upload, then removes the upload.
	CompleteUpload(ctx context.Context, o *meta.Object, uploadID string) error
	AbortUpload(ctx context.Context, bucket, key, uploadID string) error
}

// Cluster is what the object layer needs from membership and the ring.
type Cluster interface {
	// Placement returns n distinct peers for the key, in shard order.
	Placement(bucket, key string, n int) ([]meta.PeerID, error)
	// Peers returns every peer on the ring, alive or not, sorted.
	Peers() []meta.PeerID
	// Client returns the shard client of a peer.
	Client(id meta.PeerID) (ShardClient, error)
}
