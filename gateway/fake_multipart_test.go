package gateway

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"tessera/object"
)

// Multipart half of fakeBackend.

func (f *fakeBackend) NewMultipart(_ context.Context, bucket, key string, opts object.PutOptions) (string, error) {
	if err := checkStorageClass(opts.StorageClass); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.bucket(bucket); err != nil {
		return "", err
	}
	f.calls++
	f.nextUpload++
	id := fmt.Sprintf("upload-%d", f.nextUpload)
	f.uploads[id] = &fakeUpload{bucket: bucket, key: key, opts: opts, parts: map[int]*fakePart{}, initiated: f.now()}
	return id, nil
}

func (f *fakeBackend) upload(bucket, key, id string) (*fakeUpload, error) {
	u, ok := f.uploads[id]
	if !ok || u.bucket != bucket || u.key != key {
		return nil, fmt.Errorf("upload %q: %w", id, object.ErrUploadNotFound)
	}
	return u, nil
}

func (f *fakeBackend) PutPart(_ context.Context, bucket, key, uploadID string, number int, r io.Reader, size int64, contentMD5 []byte) (object.PartInfo, error) {
	data, err := readBody(r, size)
	if err != nil {
		return object.PartInfo{}, err
	}
	sum := md5.Sum(data)
	if contentMD5 != nil && !bytes.Equal(contentMD5, sum[:]) {
		return object.PartInfo{}, &object.DigestError{Want: contentMD5, Got: sum[:]}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := f.upload(bucket, key, uploadID)
	if err != nil {
		return object.PartInfo{}, err
	}
	f.calls++
	info := object.PartInfo{Number: number, Size: int64(len(data)), ETag: hex.EncodeToString(sum[:]), ModTime: f.now()}
	u.parts[number] = &fakePart{info: info, data: data}
	return info, nil
}

func (f *fakeBackend) CompleteMultipart(_ context.Context, bucket, key, uploadID string, parts []object.CompletePart, opts object.CompleteOptions) (object.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := f.upload(bucket, key, uploadID)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	var data, sums []byte
	var sizes []int64
	for i, cp := range parts {
		if i > 0 && cp.Number <= parts[i-1].Number {
			return object.ObjectInfo{}, object.ErrInvalidPartOrder
		}
		p, ok := u.parts[cp.Number]
		if !ok || p.info.ETag != cp.ETag {
			return object.ObjectInfo{}, &object.PartError{Err: object.ErrInvalidPart, Number: cp.Number, ETag: cp.ETag}
		}
		if i < len(parts)-1 && p.info.Size < f.minPartSize {
			return object.ObjectInfo{}, &object.PartError{Err: object.ErrEntityTooSmall, Number: cp.Number, Size: p.info.Size, Min: f.minPartSize}
		}
		data = append(data, p.data...)
		sizes = append(sizes, p.info.Size)
		raw, _ := hex.DecodeString(p.info.ETag)
		sums = append(sums, raw...)
	}
	if opts.ObjectSize != nil && *opts.ObjectSize != int64(len(data)) {
		return object.ObjectInfo{}, &object.SizeMismatchError{Stated: *opts.ObjectSize, Computed: int64(len(data))}
	}
	b, err := f.bucket(bucket)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	sum := md5.Sum(sums)
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), len(parts))
	if opts.VersionKey != "" {
		key = opts.VersionKey
	}
	info := infoFromPut(bucket, key, u.opts, int64(len(data)), etag, f.now())
	info.Parts, info.PartSizes = len(parts), sizes
	f.calls++
	b.objects[key] = &fakeObject{info: info, data: data}
	delete(f.uploads, uploadID)
	return info, nil
}

func (f *fakeBackend) AbortMultipart(_ context.Context, bucket, key, uploadID string, opts object.AbortOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := f.upload(bucket, key, uploadID)
	if err != nil {
		return err
	}
	if !opts.IfInitiated.IsZero() && !u.initiated.Truncate(time.Second).Equal(opts.IfInitiated.Truncate(time.Second)) {
		return object.ErrPreconditionFailed
	}
	f.calls++
	delete(f.uploads, uploadID)
	return nil
}

func (f *fakeBackend) ListParts(_ context.Context, bucket, key, uploadID string, marker, maxParts int) (object.ListPartsResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := f.upload(bucket, key, uploadID)
	if err != nil {
		return object.ListPartsResult{}, err
	}
	res := object.ListPartsResult{StorageClass: u.opts.StorageClass}
	for _, n := range slices.Sorted(maps.Keys(u.parts)) {
		if n <= marker {
			continue
		}
		if len(res.Parts) == maxParts {
			res.IsTruncated = true
			break
		}
		res.Parts = append(res.Parts, u.parts[n].info)
		res.NextPartNumberMarker = n
	}
	return res, nil
}

// object returns a stored object's info and bytes, for assertions.
func (f *fakeBackend) object(bucket, key string) (object.ObjectInfo, []byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, err := f.lookup(bucket, key)
	if err != nil {
		return object.ObjectInfo{}, nil, false
	}
	return o.info, slices.Clone(o.data), true
}

func (f *fakeBackend) mutations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
