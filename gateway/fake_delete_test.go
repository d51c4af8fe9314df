package gateway

import (
	"context"

	"tessera/object"
)

// DeleteObjectIf makes fakeBackend a conditionalDeleter.
func (f *fakeBackend) DeleteObjectIf(_ context.Context, bucket, key string, check func(*object.ObjectInfo) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.bucket(bucket)
	if err != nil {
		return err
	}
	var cur *object.ObjectInfo
	if o, ok := b.objects[key]; ok {
		info := o.info
		cur = &info
	}
	if err := check(cur); err != nil {
		return err
	}
	f.calls++
	delete(b.objects, key)
	return nil
}
