package object

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tessera/meta"
)

// Rewriter is implemented by shard clients that can give a version's
// data a new record without moving its bytes (peer.Client,
// storage.Store).
type Rewriter interface {
	// Rewrite makes o, a new version with the data of version from (the
	// peer's current record of the key), the key's record: the peer
	// links its own shard files and keeps its own inline bytes. A peer
	// whose current record is not from refuses: meta.ErrNotFound when it
	// lacks from, meta.ErrStale when it holds a newer version.
	Rewrite(ctx context.Context, o *meta.Object, from meta.Stamp) error
}

// Edit gives a rewrite its content type, user metadata, headers and
// conditions from cur, the version it replaces; an error from it stops the
// rewrite with nothing changed and is returned unchanged.
type Edit func(cur ObjectInfo) (PutOptions, error)

// rewriteTries bounds how often RewriteObject reads the version again
// after a concurrent change to it made the peers refuse the rewrite.
const rewriteTries = 5

// RewriteObject gives the current version of bucket/key the content type,
// user metadata and headers that edit makes from it, keeping its data,
// storage class and Last-Modified time: what a tagging, retention or
// legal-hold change does to a version. The new record is a new version of
// the same bytes (a new stamp, so it orders against concurrent writes like
// any write), and each peer links its shard files instead of receiving
// them again, so a tag change on a large object costs a record write per
// peer, not a copy of the object.
//
// Every peer rewrites only the exact version edit saw. Rewrites of one key
// through this layer take turns, and when another change commits in
// between (a write, or a rewrite through another gateway) the peers
// refuse and the version is read and edited again. So two changes to one
// version compose instead of one undoing the other (a tag change racing a
// legal hold cannot drop the hold), and a check edit makes (a retention
// may only be extended) holds for the version replaced. The object is
// copied onto itself instead when the peers cannot rewrite it: a peer
// lacks the version and the rest make no write quorum, or peers hold the
// records of a rewrite that fell short of its quorum, newer than the
// version yet never current, which refuse a rewrite of the version for
// good. The conditions edit returns (IfMatch, ...) are judged on the
// version it saw.
func (l *Layer) RewriteObject(ctx context.Context, bucket, key string, edit Edit) (ObjectInfo, error) {
	defer l.rewriting.lock(bucket + "/" + key)()
	var refusedFrom meta.Stamp
	for try := 1; ; try++ {
		info, from, err := l.rewriteObject(ctx, bucket, key, edit, refusedFrom)
		var qe *QuorumError
		if err == nil {
			return info, nil
		}
		if try == rewriteTries || !errors.As(err, &qe) || !qe.refused(meta.ErrStale) {
			return ObjectInfo{}, fmt.Errorf("rewrite %s/%s: %w", bucket, key, err)
		}
		refusedFrom = from
		l.log.Debug().Err(err).Str("bucket", bucket).Str("key", key).Int("try", try).Msg("version changed during a rewrite; editing it again")
		select {
		case <-ctx.Done():
			return ObjectInfo{}, fmt.Errorf("rewrite %s/%s: %w", bucket, key, ctx.Err())
		case <-time.After(time.Duration(try) * 5 * time.Millisecond):
		}
	}
}

// rewriteObject is one try of RewriteObject; it returns the stamp of the
// version it rewrote. refusedFrom is the version a previous try's rewrite
// was refused on as stale: found current again, the newer records that
// refused it are leftovers no rewrite gets past, and the object is copied.
func (l *Layer) rewriteObject(ctx context.Context, bucket, key string, edit Edit, refusedFrom meta.Stamp) (ObjectInfo, meta.Stamp, error) {
	v, err := l.resolveToRead(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, meta.Stamp{}, err
	}
	from := v.obj.Stamp
	opts, err := edit(l.infoOf(v.obj))
	if err != nil {
		return ObjectInfo{}, from, err
	}
	// The conditions are judged on the version just read, which is the
	// one the peers rewrite (each refuses unless it holds exactly that
	// stamp), so reading the key's metadata again would add a round trip
	// and judge another record. A caller's own CurrentFunc still decides.
	cond := opts
	if cond.Current == nil {
		cond.Current = func(context.Context) (Current, bool, error) {
			return Current{ETag: v.obj.ETag, Stored: key}, true, nil
		}
	}
	if err := l.checkPutCondition(ctx, bucket, key, cond); err != nil {
		return ObjectInfo{}, from, err
	}
	if from == refusedFrom {
		l.log.Debug().Str("bucket", bucket).Str("key", key).Stringer("stamp", from).
			Msg("rewrite refused by records that never became current; copying the object onto itself")
		info, err := l.copySelf(ctx, v, opts)
		return info, from, err
	}
	next := *v.obj
	next.ContentType, next.UserMeta, next.Headers = opts.ContentType, opts.UserMeta, opts.Headers
	next.Inline, next.ShardIndex = nil, 0
	l.stampRecord(&next)
	next.ModTime = v.obj.ModTime
	// One send: a peer refusing it as stale holds a version newer than
	// from, which no restamp of next gets past; RewriteObject reads the
	// key again instead.
	err = l.commitVersion(ctx, "rewrite", &next, make([]error, len(next.Distribution)), 1,
		func(ctx context.Context, c ShardClient, rec *meta.Object) error {
			rw, ok := c.(Rewriter)
			if !ok {
				return errors.New("peer cannot rewrite a record")
			}
			return rw.Rewrite(ctx, rec, from)
		})
	if err == nil {
		return l.infoOf(&next), from, nil
	}
	var qe *QuorumError
	if !errors.As(err, &qe) || !qe.refused(meta.ErrNotFound) || qe.refused(meta.ErrObjectLocked) || qe.refused(meta.ErrStale) {
		// Only peers lacking the version call for the copy here: a lock
		// would refuse it as well, and a newer version is edited again.
		return ObjectInfo{}, from, err
	}
	l.log.Debug().Err(err).Str("bucket", bucket).Str("key", key).Msg("rewrite short of a quorum; copying the object onto itself")
	info, err := l.copySelf(ctx, v, opts)
	return info, from, err
}

// copySelf writes v's bytes again as a new version with opts, for a
// rewrite the peers cannot make. It commits only while v is the key's
// current version.
func (l *Layer) copySelf(ctx context.Context, v *version, opts PutOptions) (ObjectInfo, error) {
	opts.StorageClass = v.obj.StorageClass
	if opts.IfMatch == "" {
		opts.IfMatch = v.obj.ETag
	}
	return l.copyObject(ctx, v.obj.Bucket, v.obj.Key, v.obj.Bucket, v.obj.Key, CopyOptions{Replace: true, Put: opts})
}

// refused reports whether some peer's failure is sentinel.
func (e *QuorumError) refused(sentinel error) bool {
	for _, err := range e.PerPeer {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}
