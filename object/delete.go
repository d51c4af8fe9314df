package object

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tessera/meta"
)

// DeleteObject replaces the current version of bucket/key with a
// tombstone on the peers holding it. Deleting a key that does not exist
// succeeds (S3 semantics); a missing bucket is ErrBucketNotFound.
//
// The tombstone follows the current version's code and distribution, so
// it needs that version's write quorum and no more: a delete stays as
// available as the writes of the object it removes.
func (l *Layer) DeleteObject(ctx context.Context, bucket, key string) error {
	if err := l.deleteObject(ctx, bucket, key); err != nil {
		return fmt.Errorf("delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

func (l *Layer) deleteObject(ctx context.Context, bucket, key string) error {
	v, err := l.resolve(ctx, bucket, key)
	switch {
	case errors.Is(err, ErrObjectNotFound):
		return nil
	case err != nil:
		return err
	}
	o := v.obj
	st := l.stamp()
	tomb := &meta.Object{
		Bucket:       bucket,
		Key:          key,
		Stamp:        st,
		Deleted:      true,
		StorageClass: o.StorageClass,
		Code:         o.Code,
		BlockSize:    o.BlockSize,
		Distribution: o.Distribution,
		ModTime:      time.Unix(0, st.Nanos).UTC(),
	}
	return l.commitObject(ctx, tomb, make([]error, len(o.Distribution)), func(int, *meta.Object) []string { return nil })
}
