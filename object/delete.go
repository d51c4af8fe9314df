package object

import (
	"context"
	"errors"
	"fmt"

	"tessera/meta"
	"tessera/objectlock"
)

// DeleteObject replaces the current version of bucket/key with a
// tombstone on the peers holding it. Deleting a key that does not exist
// succeeds (S3 semantics); a missing bucket is ErrBucketNotFound.
//
// The tombstone follows the current version's code and distribution, so
// it needs that version's write quorum and no more: a delete stays as
// available as the writes of the object it removes.
func (l *Layer) DeleteObject(ctx context.Context, bucket, key string) error {
	return l.DeleteObjectWith(ctx, bucket, key, DeleteOptions{})
}

// DeleteOptions tune DeleteObjectWith.
type DeleteOptions struct {
	// Check makes the delete conditional (S3's conditional delete): it is
	// called with the current version's info, or nil when the key has
	// none, and an error from it is returned unchanged with nothing
	// deleted. Nil always passes. As with conditional PUTs, the check and
	// the tombstone's commit are one metadata round trip apart, not
	// atomic.
	Check func(*ObjectInfo) error
	// BypassGovernance is the caller's consent to delete a version under
	// a governance retention (x-amz-bypass-governance-retention). The
	// tombstone carries it, and each peer decides against the version it
	// holds; without it a peer refuses, with meta.ErrObjectLocked.
	BypassGovernance bool
}

// DeleteObjectWith is DeleteObject with options.
func (l *Layer) DeleteObjectWith(ctx context.Context, bucket, key string, opts DeleteOptions) error {
	if err := l.deleteObject(ctx, bucket, key, opts); err != nil {
		return fmt.Errorf("delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

func (l *Layer) deleteObject(ctx context.Context, bucket, key string, opts DeleteOptions) error {
	check := opts.Check
	if check == nil {
		check = func(*ObjectInfo) error { return nil }
	}
	v, err := l.resolve(ctx, bucket, key)
	switch {
	case errors.Is(err, ErrObjectNotFound):
		return check(nil)
	case err != nil:
		return err
	}
	info := l.infoOf(v.obj)
	if err := check(&info); err != nil {
		return err
	}
	o := v.obj
	tomb := &meta.Object{
		Bucket:       bucket,
		Key:          key,
		Deleted:      true,
		StorageClass: o.StorageClass,
		Code:         o.Code,
		BlockSize:    o.BlockSize,
		Distribution: o.Distribution,
	}
	if opts.BypassGovernance {
		tomb.Headers = objectlock.BypassMark()
	}
	l.stampRecord(tomb)
	return l.commitObject(ctx, tomb, make([]error, len(o.Distribution)), func(int, *meta.Object) []string { return nil })
}
