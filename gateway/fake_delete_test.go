package gateway

import (
	"context"

	"tessera/object"
)

// DeleteObjectWith deletes like the object layer: under opts.Check when
// set. The fake keeps no lock state, so the bypass flag changes nothing.
func (f *fakeBackend) DeleteObjectWith(_ context.Context, bucket, key string, opts object.DeleteOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.injected("DeleteObject:" + key); err != nil {
		return err
	}
	b, err := f.bucket(bucket)
	if err != nil {
		return err
	}
	if opts.Check != nil {
		var cur *object.ObjectInfo
		if o, ok := b.objects[key]; ok {
			info := o.info
			cur = &info
		}
		if err := opts.Check(cur); err != nil {
			return err
		}
	}
	f.calls++
	delete(b.objects, key)
	return nil
}

// DeleteObjects deletes each key as DeleteObjectWith does.
func (f *fakeBackend) DeleteObjects(ctx context.Context, bucket string, keys []string, bypass bool) []error {
	f.mu.Lock()
	f.batched = append(f.batched, keys)
	f.mu.Unlock()
	errs := make([]error, len(keys))
	for i, k := range keys {
		errs[i] = f.DeleteObjectWith(ctx, bucket, k, object.DeleteOptions{BypassGovernance: bypass})
	}
	return errs
}
