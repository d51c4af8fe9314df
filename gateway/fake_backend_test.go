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
	"strings"
	"sync"
	"time"

	"tessera/checksum"
	"tessera/meta"
	"tessera/object"
)

// fakeBackend is an in-memory Backend with S3 semantics close enough for
// handler tests: sorted listings with delimiters, multipart ETags, part
// size limits. fail, when set, injects an error into the named operation.
type fakeBackend struct {
	mu           sync.Mutex
	versionClock int64
	buckets      map[string]*fakeBucket
	uploads      map[string]*fakeUpload
	nextUpload   int
	minPartSize  int64
	now          func() time.Time

	// fail returns an error to inject for op ("PutObject", ...), or nil.
	fail func(op string) error
	// getFailAfter, when > 0, makes GetObject fail after writing that many
	// body bytes, as a peer dying mid-stream would.
	getFailAfter int64
	// calls counts mutating calls, so tests can assert nothing happened.
	calls int
	// batched holds the keys of each DeleteObjects call.
	batched [][]string
}

type fakeBucket struct {
	created time.Time
	objects map[string]*fakeObject
}

type fakeObject struct {
	info object.ObjectInfo
	data []byte
}

type fakeUpload struct {
	bucket, key string
	opts        object.PutOptions
	parts       map[int]*fakePart
	initiated   time.Time
}

type fakePart struct {
	info object.PartInfo
	data []byte
}

func newFakeBackend() *fakeBackend {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	return &fakeBackend{
		buckets:     map[string]*fakeBucket{},
		uploads:     map[string]*fakeUpload{},
		minPartSize: object.MinPartSize,
		now: func() time.Time {
			n++
			return t0.Add(time.Duration(n) * time.Second)
		},
	}
}

func (f *fakeBackend) injected(op string) error {
	if f.fail == nil {
		return nil
	}
	return f.fail(op)
}

func (f *fakeBackend) bucket(name string) (*fakeBucket, error) {
	b, ok := f.buckets[name]
	if !ok {
		return nil, fmt.Errorf("bucket %q: %w", name, object.ErrBucketNotFound)
	}
	return b, nil
}

func (f *fakeBackend) MakeBucket(_ context.Context, bucket string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.injected("MakeBucket"); err != nil {
		return err
	}
	if _, ok := f.buckets[bucket]; ok {
		return object.ErrBucketExists
	}
	f.calls++
	f.buckets[bucket] = &fakeBucket{created: f.now(), objects: map[string]*fakeObject{}}
	return nil
}

func (f *fakeBackend) HeadBucket(_ context.Context, bucket string) (object.BucketInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.injected("HeadBucket"); err != nil {
		return object.BucketInfo{}, err
	}
	b, err := f.bucket(bucket)
	if err != nil {
		return object.BucketInfo{}, err
	}
	return object.BucketInfo{Name: bucket, Created: b.created}, nil
}

func (f *fakeBackend) DeleteBucket(_ context.Context, bucket string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.bucket(bucket)
	if err != nil {
		return err
	}
	if len(b.objects) > 0 {
		return object.ErrBucketNotEmpty
	}
	f.calls++
	delete(f.buckets, bucket)
	return nil
}

func (f *fakeBackend) ListBuckets(context.Context) ([]object.BucketInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []object.BucketInfo
	for _, name := range slices.Sorted(maps.Keys(f.buckets)) {
		out = append(out, object.BucketInfo{Name: name, Created: f.buckets[name].created})
	}
	return out, nil
}

// readBody reads r as the object layer would: an error from r (a failed
// verification) aborts the write.
func readBody(r io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if size >= 0 && int64(len(data)) != size {
		return nil, object.ErrIncompleteBody
	}
	return data, nil
}

func checkStorageClass(sc string) error {
	switch sc {
	case "", "STANDARD", "REDUCED_REDUNDANCY", "COLD":
		return nil
	case "WIDE":
		return object.ErrCodeTooWide
	}
	return object.ErrInvalidStorageClass
}

func (f *fakeBackend) PutObject(_ context.Context, bucket, key string, r io.Reader, size int64, opts object.PutOptions) (object.ObjectInfo, error) {
	if err := checkStorageClass(opts.StorageClass); err != nil {
		return object.ObjectInfo{}, err
	}
	data, err := readBody(r, size)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	sum := md5.Sum(data)
	if opts.ContentMD5 != nil && !bytes.Equal(opts.ContentMD5, sum[:]) {
		return object.ObjectInfo{}, &object.DigestError{Want: opts.ContentMD5, Got: sum[:]}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.injected("PutObject"); err != nil {
		return object.ObjectInfo{}, err
	}
	b, err := f.bucket(bucket)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	f.calls++
	info := infoFromPut(bucket, key, opts, int64(len(data)), hex.EncodeToString(sum[:]), f.now())
	info.Checksum = fakeChecksum(r, data)
	b.objects[key] = &fakeObject{info: info, data: data}
	return info, nil
}

// fakeChecksum is the object checksum the real layer would store: the
// body's declared one, else S3's default.
func fakeChecksum(r io.Reader, data []byte) object.ChecksumInfo {
	if src, ok := r.(object.ChecksumSource); ok && src.DeclaredChecksum() != "" {
		a := src.DeclaredChecksum()
		return object.ChecksumInfo{Algorithm: a, Type: checksum.FullObject, Value: src.Checksums()[a.Lower()]}
	}
	return object.ChecksumInfo{Algorithm: checksum.Default, Type: checksum.FullObject, Value: checksum.Default.Sum(data)}
}

func infoFromPut(bucket, key string, opts object.PutOptions, size int64, etag string, mod time.Time) object.ObjectInfo {
	sc := opts.StorageClass
	if sc == "" {
		sc = "STANDARD"
	}
	return object.ObjectInfo{
		Bucket: bucket, Key: key, Size: size, ETag: etag, ModTime: mod,
		ContentType: opts.ContentType, UserMeta: maps.Clone(opts.UserMeta), Headers: maps.Clone(opts.Headers),
		StorageClass: sc, Parts: 1, DeleteMarker: opts.DeleteMarker,
	}
}

func (f *fakeBackend) lookup(bucket, key string) (*fakeObject, error) {
	b, err := f.bucket(bucket)
	if err != nil {
		return nil, err
	}
	o, ok := b.objects[key]
	if !ok {
		return nil, fmt.Errorf("object %q: %w", key, object.ErrObjectNotFound)
	}
	return o, nil
}

func (f *fakeBackend) GetObject(_ context.Context, bucket, key string, start func(object.ObjectInfo) (io.Writer, int64, int64, error)) error {
	f.mu.Lock()
	if err := f.injected("GetObject"); err != nil {
		f.mu.Unlock()
		return err
	}
	o, err := f.lookup(bucket, key)
	failAfter := f.getFailAfter
	f.mu.Unlock()
	if err != nil {
		return err
	}
	w, off, n, err := start(o.info)
	if err != nil {
		return err
	}
	if n < 0 {
		n = int64(len(o.data)) - off
	}
	data := o.data[off : off+n]
	if failAfter > 0 && failAfter < int64(len(data)) {
		if _, err := w.Write(data[:failAfter]); err != nil {
			return err
		}
		return fmt.Errorf("read shard: %w", object.ErrQuorum)
	}
	_, err = w.Write(data)
	return err
}

func (f *fakeBackend) HeadObject(_ context.Context, bucket, key string) (object.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.injected("HeadObject"); err != nil {
		return object.ObjectInfo{}, err
	}
	o, err := f.lookup(bucket, key)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	return o.info, nil
}

// ListObjects lists keys > After in order, folding keys that share a
// prefix up to the delimiter into one common prefix.
func (f *fakeBackend) ListObjects(_ context.Context, bucket string, opts object.ListOptions) (object.ListResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.bucket(bucket)
	if err != nil {
		return object.ListResult{}, err
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = object.DefaultMaxKeys
	}
	var res object.ListResult
	count := 0
	for _, key := range slices.Sorted(maps.Keys(b.objects)) {
		if !strings.HasPrefix(key, opts.Prefix) || key <= opts.After {
			continue
		}
		entry, isPrefix := key, false
		if opts.Delimiter != "" {
			if i := strings.Index(key[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				entry, isPrefix = key[:len(opts.Prefix)+i+len(opts.Delimiter)], true
			}
		}
		if isPrefix && (entry <= opts.After || (len(res.Prefixes) > 0 && res.Prefixes[len(res.Prefixes)-1] == entry)) {
			continue
		}
		if count == opts.MaxKeys {
			res.IsTruncated = true
			break
		}
		count++
		res.NextAfter = entry
		if isPrefix {
			res.Prefixes = append(res.Prefixes, entry)
		} else {
			res.Objects = append(res.Objects, b.objects[key].info)
		}
	}
	return res, nil
}

func (f *fakeBackend) CopyObject(_ context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts object.CopyOptions) (object.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, err := f.lookup(srcBucket, srcKey)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	dst, err := f.bucket(dstBucket)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	info := src.info
	if opts.Replace {
		if err := checkStorageClass(opts.Put.StorageClass); err != nil {
			return object.ObjectInfo{}, err
		}
		info = infoFromPut(dstBucket, dstKey, opts.Put, src.info.Size, src.info.ETag, time.Time{})
		info.Parts = src.info.Parts
	} else if opts.Put.StorageClass != "" {
		info.StorageClass = opts.Put.StorageClass
	}
	info.Bucket, info.Key, info.ModTime = dstBucket, dstKey, f.now()
	f.calls++
	dst.objects[dstKey] = &fakeObject{info: info, data: slices.Clone(src.data)}
	return info, nil
}

func (f *fakeBackend) RewriteObject(_ context.Context, bucket, key string, edit object.Edit) (object.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, err := f.lookup(bucket, key)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	opts, err := edit(o.info)
	if err != nil {
		return object.ObjectInfo{}, err
	}
	if opts.IfMatch != "" && opts.IfMatch != o.info.ETag {
		return object.ObjectInfo{}, object.ErrPreconditionFailed
	}
	o.info.ContentType, o.info.UserMeta, o.info.Headers = opts.ContentType, opts.UserMeta, opts.Headers
	f.calls++
	return o.info, nil
}

func (f *fakeBackend) NewVersionID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Versions are ordered against the null version by write time, so
	// the IDs follow the clock objects are stamped with, strictly rising.
	f.versionClock = max(f.versionClock+1, f.now().UnixNano())
	return meta.NewVersionID(f.versionClock)
}
