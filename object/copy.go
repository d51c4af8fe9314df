package object

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"

	"tessera/checksum"
	"tessera/meta"
)

// CopyObject copies the current version of srcBucket/srcKey to
// dstBucket/dstKey by streaming its decoded bytes into a new PUT. The copy
// keeps the source's metadata and storage class unless opts.Replace, in
// which case opts.Put supplies both. Copying an object onto itself
// without Replace is ErrCopyToSelf.
func (l *Layer) CopyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts CopyOptions) (ObjectInfo, error) {
	info, err := l.copyObject(ctx, srcBucket, srcKey, dstBucket, dstKey, opts)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("copy %s/%s to %s/%s: %w", srcBucket, srcKey, dstBucket, dstKey, err)
	}
	return info, nil
}

func (l *Layer) copyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts CopyOptions) (ObjectInfo, error) {
	if srcBucket == dstBucket && srcKey == dstKey && !opts.Replace {
		return ObjectInfo{}, ErrCopyToSelf
	}
	v, err := l.resolveToRead(ctx, srcBucket, srcKey)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("source: %w", err)
	}
	src := v.obj
	if src.Size > MaxPutSize {
		return ObjectInfo{}, fmt.Errorf("%w: source is %d bytes", ErrEntityTooLarge, src.Size)
	}
	p := putReq{bucket: dstBucket, key: dstKey, size: src.Size, sum: copyChecksum(opts, src)}
	if opts.Replace {
		p.opts = opts.Put
		p.opts.ContentMD5 = nil
		if p.class, p.code, err = l.codeFor(opts.Put.StorageClass); err != nil {
			return ObjectInfo{}, err
		}
	} else {
		p.opts = PutOptions{ContentType: src.ContentType, UserMeta: src.UserMeta, Headers: src.Headers}
		p.class, p.code, err = l.codeFor(src.StorageClass)
		if err != nil {
			// The class left the configuration; keep the object's own code.
			p.class, p.code = classOrStandard(src.StorageClass), src.Code
			if err := l.checkWidth(p.class, p.code); err != nil {
				return ObjectInfo{}, err
			}
		}
	}
	p.opts.Headers = copyTags(p.opts.Headers, src.Headers, opts.Tags)
	return l.pipeCopy(ctx, v, p)
}

// copyTags applies the tagging directive to the copy's headers.
func copyTags(headers, src map[string]string, t CopyTags) map[string]string {
	if t.Header == "" {
		return headers
	}
	v := src[t.Header]
	if t.Replace {
		v = t.Value
	}
	out := make(map[string]string, len(headers)+1)
	maps.Copy(out, headers)
	delete(out, t.Header)
	if v != "" {
		out[t.Header] = v
	}
	return out
}

// copyChecksum is the algorithm of a copy's checksum: the one asked for,
// else the source's, else S3's default.
func copyChecksum(opts CopyOptions, src *meta.Object) checksum.Algorithm {
	if opts.ChecksumAlgorithm != "" {
		return opts.ChecksumAlgorithm
	}
	if a := storedChecksum(src.Headers).Algorithm; a != "" {
		return a
	}
	return checksum.Default
}

// pipeCopy runs the source read and the destination write concurrently
// through a pipe, so a copy holds no more memory than a PUT.
func (l *Layer) pipeCopy(ctx context.Context, v *version, p putReq) (ObjectInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		readErr = l.readVersion(ctx, v, pw, 0, v.obj.Size)
		pw.CloseWithError(readErr)
	}()
	p.body = pr
	info, err := l.put(ctx, p)
	pr.CloseWithError(fmt.Errorf("copy destination closed: %w", errOr(err, io.ErrClosedPipe)))
	cancel()
	wg.Wait()
	switch {
	case err != nil:
		// Includes a source read failure, which reaches the PUT as its
		// body's error; a read error seen here otherwise is only the
		// consequence of the PUT giving up.
		return ObjectInfo{}, err
	case readErr != nil:
		return ObjectInfo{}, fmt.Errorf("read source: %w", readErr)
	}
	return info, nil
}
