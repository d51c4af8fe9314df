package gateway

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"tessera/object"
)

// copyRequest is a parsed CopyObject.
type copyRequest struct {
	srcBucket, srcKey string
	dstBucket, dstKey string
	opts              object.CopyOptions
	srcCond           preconditions
}

// parseCopySource splits x-amz-copy-source ("bucket/key" or "/bucket/key",
// URL-encoded, optionally followed by "?versionId=..."). The version is
// ignored: the query is cut before decoding, so an encoded "?" stays part
// of the key.
func parseCopySource(v string) (bucket, key string, err error) {
	raw, _, _ := strings.Cut(v, "?")
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return "", "", apiErr(errInvalidCopySource)
	}
	decoded = strings.TrimPrefix(decoded, "/")
	bucket, key, ok := strings.Cut(decoded, "/")
	if !ok || bucket == "" || key == "" {
		return "", "", apiErr(errInvalidCopySource)
	}
	if !validBucketName(bucket) {
		return "", "", apiErr(errInvalidBucketName)
	}
	if err := checkKey(key); err != nil {
		return "", "", err
	}
	return bucket, key, nil
}

func parseCopy(r *http.Request) (copyRequest, error) {
	var p copyRequest
	var err error
	if p.dstBucket, p.dstKey, err = objectParams(r); err != nil {
		return p, err
	}
	if p.srcBucket, p.srcKey, err = parseCopySource(r.Header.Get("X-Amz-Copy-Source")); err != nil {
		return p, err
	}
	switch d := r.Header.Get("X-Amz-Metadata-Directive"); d {
	case "", "COPY":
	case "REPLACE":
		p.opts.Replace = true
	default:
		return p, apiErrf(errInvalidArgument, "Unknown metadata directive %q.", d)
	}
	if p.opts.Put, err = parsePutOptions(r.Header); err != nil {
		return p, err
	}
	if p.opts.ChecksumAlgorithm, err = parseChecksumAlgorithm(r.Header); err != nil {
		return p, err
	}
	if !p.opts.Replace {
		// COPY keeps the source's metadata; only a storage class change
		// is taken from the request.
		p.opts.Put = object.PutOptions{StorageClass: p.opts.Put.StorageClass}
	}
	self := p.srcBucket == p.dstBucket && p.srcKey == p.dstKey
	if self && !p.opts.Replace && p.opts.Put.StorageClass == "" {
		return p, apiErr(errCopyToSelf)
	}
	p.srcCond = readPreconditions(r.Header, "X-Amz-Copy-Source-")
	return p, nil
}

func (g *gateway) copyObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCopy(r)
	if err != nil {
		return err
	}
	if err := g.checkCopySource(r, p); err != nil {
		return err
	}
	info, err := g.be.CopyObject(r.Context(), p.srcBucket, p.srcKey, p.dstBucket, p.dstKey, p.opts)
	if err != nil {
		return err
	}
	return writeXML(w, http.StatusOK, copyObjectResult{LastModified: xmlTime(info.ModTime), ETag: quoteETag(info.ETag),
		objectChecksumXML: objectChecksumOf(info.Checksum)})
}

// checkCopySource evaluates x-amz-copy-source-if-* against the source
// (preconditions.checkCopy). The check and the copy are not atomic; a
// source replaced in between is copied anyway.
func (g *gateway) checkCopySource(r *http.Request, p copyRequest) error {
	if !p.srcCond.present() {
		return nil
	}
	info, err := g.be.HeadObject(r.Context(), p.srcBucket, p.srcKey)
	if err != nil {
		return err
	}
	return p.srcCond.checkCopy(info, time.Now())
}
