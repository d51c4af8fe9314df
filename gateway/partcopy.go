package gateway

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"tessera/object"
)

type copyPartResult struct {
	XMLName      xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyPartResult"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	checksumsXML
}

// parseCopySourceRange reads x-amz-copy-source-range ("bytes=first-last",
// both bounds required, as S3) against the source size.
func parseCopySourceRange(v string, size int64) (off, length int64, err error) {
	if v == "" {
		return 0, size, nil
	}
	spec, ok := strings.CutPrefix(v, "bytes=")
	first, last, ok2 := strings.Cut(spec, "-")
	a, okA := parseDigits(first)
	b, okB := parseDigits(last)
	if !ok || !ok2 || !okA || !okB || a > b {
		return 0, 0, withFields(apiErrf(errInvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"),
			errorField{"ArgumentName", "x-amz-copy-source-range"}, errorField{"ArgumentValue", v})
	}
	if b >= size {
		return 0, 0, apiErrf(errInvalidArgument, "Range specified is not valid for source object of size: %d", size)
	}
	return a, b - a + 1, nil
}

// uploadPartCopy fills a part from a byte range of an existing object,
// streaming it from the source's shards into the part's through a pipe.
func (g *gateway) uploadPartCopy(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	number, err := parsePartNumber(q)
	if err != nil {
		return err
	}
	srcBucket, srcKey, srcVersion, err := parseCopySource(r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return g.noBucketFirst(r.Context(), bucket, err)
	}
	src, info, err := g.copySource(r.Context(), srcBucket, srcKey, srcVersion)
	if err != nil {
		return err
	}
	if src.id != "" {
		w.Header().Set("X-Amz-Copy-Source-Version-Id", src.id)
	}
	if err := readPreconditions(r.Header, "X-Amz-Copy-Source-").checkCopy(info, time.Now()); err != nil {
		return err
	}
	off, length, err := parseCopySourceRange(r.Header.Get("X-Amz-Copy-Source-Range"), info.Size)
	if err != nil {
		return err
	}
	if length > object.MaxPartSize {
		return apiErr(errEntityTooLarge)
	}
	part, err := g.copyRange(r.Context(), srcBucket, src.stored, info.ETag, off, length, func(body io.Reader) (object.PartInfo, error) {
		return g.be.PutPart(r.Context(), bucket, key, q.Get("uploadId"), number, object.CopiedBody(body), length, nil)
	})
	if err != nil {
		return err
	}
	return writeXML(w, http.StatusOK, copyPartResult{LastModified: xmlTime(part.ModTime), ETag: quoteETag(part.ETag),
		checksumsXML: checksumsFrom(part.Checksums)})
}

// noBucketFirst returns NoSuchBucket when the destination bucket does not
// exist, else err: S3 looks the bucket up before it reads the copy
// source, so a bad source to a missing bucket is a NoSuchBucket. The
// lookup is made only for a request that fails anyway.
func (g *gateway) noBucketFirst(ctx context.Context, bucket string, err error) error {
	if _, herr := g.be.HeadBucket(ctx, bucket); errors.Is(herr, object.ErrBucketNotFound) {
		return herr
	}
	return err
}

// copyRange runs a ranged read of the source and put concurrently. The
// source must still have etag when the read starts, so a part never mixes
// two versions of the source.
func (g *gateway) copyRange(ctx context.Context, bucket, key, etag string, off, length int64,
	put func(io.Reader) (object.PartInfo, error)) (object.PartInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	readErr := make(chan error, 1)
	go func() {
		err := g.be.GetObject(ctx, bucket, key, func(info object.ObjectInfo) (io.Writer, int64, int64, error) {
			if info.ETag != etag {
				return nil, 0, 0, apiErr(errPreconditionFailed)
			}
			return pw, off, length, nil
		})
		if err != nil {
			err = fmt.Errorf("read copy source: %w", err)
		}
		pw.CloseWithError(err)
		readErr <- err
	}()
	part, err := put(pr)
	var rerr error
	readFirst := false
	select {
	case rerr = <-readErr:
		readFirst = true
	default:
	}
	pr.CloseWithError(io.ErrClosedPipe)
	cancel()
	if !readFirst {
		// The put ended first: a read failing now fails because we closed
		// the pipe and cancelled it (its peers' calls cut short), which is
		// no cause. A put that failed says why; one that succeeded had
		// every byte, each verified before the read passed it on.
		<-readErr
		return part, err
	}
	// A read that ended first and failed is the root cause of the put's
	// failure, or taints a put that raced to success.
	if rerr != nil && !errors.Is(rerr, io.ErrClosedPipe) && !errors.Is(rerr, context.Canceled) {
		return object.PartInfo{}, rerr
	}
	return part, err
}
