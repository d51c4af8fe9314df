package gateway

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

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
// of the key. Each fault is S3's InvalidArgument naming the header.
func parseCopySource(v string) (bucket, key string, err error) {
	bad := func(msg, value string) error {
		return withFields(apiErrf(errInvalidArgument, "%s", msg),
			errorField{"ArgumentName", "x-amz-copy-source"}, errorField{"ArgumentValue", value})
	}
	raw, _, _ := strings.Cut(v, "?")
	decoded, err := url.PathUnescape(raw)
	if err != nil || !utf8.ValidString(decoded) {
		return "", "", bad("Invalid copy source encoding", v)
	}
	decoded = strings.TrimPrefix(decoded, "/")
	bucket, key, _ = strings.Cut(decoded, "/")
	if !validBucketName(bucket) {
		return "", "", bad("Invalid copy source bucket name", v)
	}
	if key == "" || climbsOut(key) {
		return "", "", bad("Invalid copy source object key", key)
	}
	if err := checkKey(key); err != nil {
		return "", "", err
	}
	return bucket, key, nil
}

// climbsOut reports a key that is "." or whose ".." segments go above
// the bucket, which S3 refuses as a copy source.
func climbsOut(key string) bool {
	if key == "." {
		return true
	}
	depth := 0
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "..":
			if depth--; depth < 0 {
				return true
			}
		case ".", "":
		default:
			depth++
		}
	}
	return false
}

// parseDirective reads x-amz-metadata-directive or -tagging-directive:
// COPY (the default) or REPLACE.
func parseDirective(h http.Header, name, what string) (replace bool, err error) {
	switch d := h.Get(name); d {
	case "", "COPY":
		return false, nil
	case "REPLACE":
		return true, nil
	default:
		return false, withFields(apiErrf(errInvalidArgument, "Unknown %s directive.", what),
			errorField{"ArgumentName", strings.ToLower(name)}, errorField{"ArgumentValue", d})
	}
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
	if p.opts.Replace, err = parseDirective(r.Header, "X-Amz-Metadata-Directive", "metadata"); err != nil {
		return p, err
	}
	replaceTags, err := parseDirective(r.Header, "X-Amz-Tagging-Directive", "tagging")
	if err != nil {
		return p, err
	}
	if p.opts.Put, err = parsePutOptions(r.Header); err != nil {
		return p, err
	}
	// Tags follow their own directive, whatever the metadata's.
	p.opts.Tags = object.CopyTags{Header: tagsHeader, Replace: replaceTags, Value: p.opts.Put.Headers[tagsHeader]}
	if p.opts.ChecksumAlgorithm, err = parseChecksumAlgorithm(r.Header); err != nil {
		return p, err
	}
	if !p.opts.Replace {
		// COPY keeps the source's metadata; only a storage class change
		// is taken from the request.
		p.opts.Put = object.PutOptions{StorageClass: p.opts.Put.StorageClass}
	}
	self := p.srcBucket == p.dstBucket && p.srcKey == p.dstKey
	if self && !p.opts.Replace && !replaceTags && p.opts.Put.StorageClass == "" {
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
