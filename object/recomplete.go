package object

import (
	"context"
	"errors"
	"strings"
	"sync"

	"tessera/meta"
)

// completedBefore answers a CompleteMultipartUpload whose upload is gone.
// S3 answers a Complete repeated after success with the same result (a
// client whose first answer was lost retries), so when the key's current
// version was completed from this upload with the same parts, that
// version's info is returned; otherwise notFound. An overwritten or
// deleted key, or another parts list, is NoSuchUpload as before.
func (l *Layer) completedBefore(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, notFound error) (ObjectInfo, error) {
	v, err := l.resolve(ctx, bucket, key)
	switch {
	case errors.Is(err, ErrQuorum):
		return ObjectInfo{}, err
	case err != nil || v.obj.UploadID != uploadID || !sameParts(v.obj.Parts, parts):
		return ObjectInfo{}, notFound
	}
	return l.infoOf(v.obj), nil
}

// sameParts reports whether a Complete's list names exactly the parts a
// completed version is made of.
func sameParts(have []meta.Part, want []CompletePart) bool {
	if len(have) != len(want) {
		return false
	}
	for i, p := range have {
		if p.Number != want[i].Number || !strings.EqualFold(p.ETag, strings.Trim(want[i].ETag, `"`)) {
			return false
		}
	}
	return true
}

// keyLocks serialises callers by key. The zero value is ready; a key
// takes memory only while someone holds or waits for it.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu    sync.Mutex
	users int
}

// lock blocks until key is free and returns its unlock.
func (k *keyLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	kl := k.locks[key]
	if kl == nil {
		kl = &keyLock{}
		k.locks[key] = kl
	}
	kl.users++
	k.mu.Unlock()
	kl.mu.Lock()
	return func() {
		kl.mu.Unlock()
		k.mu.Lock()
		if kl.users--; kl.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
