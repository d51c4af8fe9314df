package object

import (
	"context"
	"errors"
	"fmt"

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

// RewriteObject gives the current version of bucket/key the content type,
// user metadata and headers of opts, keeping its data, storage class and
// Last-Modified time: what a tagging, retention or legal-hold change does
// to a version. The new record is a new version of the same bytes (a
// new stamp, so it orders against concurrent writes like any write), and
// each peer links its shard files instead of receiving them again, so a
// tag change on a large object costs a record write per peer, not a copy
// of the object. When the peers cannot rewrite (a peer lacks the version
// and the rest make no write quorum) it falls back to copying the object
// onto itself. opts.IfMatch and the other conditions hold as for a PUT.
func (l *Layer) RewriteObject(ctx context.Context, bucket, key string, opts PutOptions) (ObjectInfo, error) {
	info, err := l.rewriteObject(ctx, bucket, key, opts)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("rewrite %s/%s: %w", bucket, key, err)
	}
	return info, nil
}

func (l *Layer) rewriteObject(ctx context.Context, bucket, key string, opts PutOptions) (ObjectInfo, error) {
	v, err := l.resolveToRead(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
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
		return ObjectInfo{}, err
	}
	next := *v.obj
	next.ContentType, next.UserMeta, next.Headers = opts.ContentType, opts.UserMeta, opts.Headers
	next.Inline, next.ShardIndex = nil, 0
	l.stampRecord(&next)
	next.ModTime = v.obj.ModTime
	from := v.obj.Stamp
	err = l.commitVersion(ctx, "rewrite", &next, make([]error, len(next.Distribution)),
		func(ctx context.Context, c ShardClient, rec *meta.Object) error {
			rw, ok := c.(Rewriter)
			if !ok {
				return errors.New("peer cannot rewrite a record")
			}
			return rw.Rewrite(ctx, rec, from)
		})
	if err == nil {
		return l.infoOf(&next), nil
	}
	var qe *QuorumError
	if !errors.As(err, &qe) || !qe.refused(meta.ErrNotFound) || qe.refused(meta.ErrObjectLocked) || qe.refused(meta.ErrStale) {
		// Only peers lacking the version call for the copy: a lock or a
		// newer version would refuse it as well, or be undone by it.
		return ObjectInfo{}, err
	}
	l.log.Debug().Err(err).Str("bucket", bucket).Str("key", key).Msg("rewrite short of a quorum; copying the object onto itself")
	opts.StorageClass = v.obj.StorageClass
	if opts.IfMatch == "" {
		opts.IfMatch = v.obj.ETag
	}
	return l.copyObject(ctx, bucket, key, bucket, key, CopyOptions{Replace: true, Put: opts})
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
