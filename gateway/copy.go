package gateway

import (
	"cmp"
	"maps"
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
	srcVersion        string // the source's ?versionId, "" for its latest
	dstBucket, dstKey string
	opts              object.CopyOptions
	srcCond           preconditions
}

// parseCopySource splits x-amz-copy-source ("bucket/key" or "/bucket/key",
// URL-encoded, optionally followed by "?versionId=..."). The query is cut
// before decoding, so an encoded "?" stays part of the key. Each fault is
// S3's InvalidArgument naming the header.
func parseCopySource(v string) (bucket, key, versionID string, err error) {
	bad := func(msg, value string) error {
		return withFields(apiErrf(errInvalidArgument, "%s", msg),
			errorField{"ArgumentName", "x-amz-copy-source"}, errorField{"ArgumentValue", value})
	}
	raw, query, _ := strings.Cut(v, "?")
	decoded, err := url.PathUnescape(raw)
	if err != nil || !utf8.ValidString(decoded) {
		return "", "", "", bad("Invalid copy source encoding", v)
	}
	decoded = strings.TrimPrefix(decoded, "/")
	bucket, key, _ = strings.Cut(decoded, "/")
	if !validBucketName(bucket) {
		return "", "", "", bad("Invalid copy source bucket name", v)
	}
	if key == "" || climbsOut(key) {
		return "", "", "", bad("Invalid copy source object key", key)
	}
	if err := checkKey(key); err != nil {
		return "", "", "", err
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", "", bad("Invalid copy source encoding", v)
	}
	if err := checkVersionID(q); err != nil {
		return "", "", "", err
	}
	return bucket, key, q.Get("versionId"), nil
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
	if p.srcBucket, p.srcKey, p.srcVersion, err = parseCopySource(r.Header.Get("X-Amz-Copy-Source")); err != nil {
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
		// and a website redirect (never the source's) are taken from the
		// request.
		p.opts.Put = object.PutOptions{StorageClass: p.opts.Put.StorageClass, Headers: redirectOnly(p.opts.Put.Headers)}
	}
	self := p.srcBucket == p.dstBucket && p.srcKey == p.dstKey && p.srcVersion == ""
	// As in S3, a copy onto itself must change something: the metadata,
	// the tags, the storage class or the website redirect.
	if self && !p.opts.Replace && !replaceTags && p.opts.Put.StorageClass == "" && p.opts.Put.Headers[redirectHeader] == "" {
		return p, apiErr(errCopyToSelf)
	}
	p.srcCond = readPreconditions(r.Header, "X-Amz-Copy-Source-")
	return p, nil
}

// redirectOnly keeps the website redirect of a COPY request's headers.
func redirectOnly(headers map[string]string) map[string]string {
	if v, ok := headers[redirectHeader]; ok {
		return map[string]string{redirectHeader: v}
	}
	return nil
}

func (g *gateway) copyObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCopy(r)
	if err != nil {
		return err
	}
	src, srcInfo, err := g.checkCopySource(r, p)
	if err != nil {
		return err
	}
	stored, vid, err := g.newVersion(r.Context(), p.dstBucket, p.dstKey)
	if err != nil {
		return err
	}
	if !p.opts.Replace {
		// The copy keeps the source's metadata but never its object lock,
		// as in S3: the lock comes from the request or the destination
		// bucket's default, so the metadata is passed on explicitly.
		p.opts.Replace = true
		headers := withoutLock(srcInfo.Headers)
		if headers == nil {
			headers = map[string]string{}
		}
		delete(headers, redirectHeader)
		maps.Copy(headers, p.opts.Put.Headers)
		p.opts.Put = object.PutOptions{ContentType: srcInfo.ContentType, UserMeta: srcInfo.UserMeta,
			Headers: headers, StorageClass: cmp.Or(p.opts.Put.StorageClass, srcInfo.StorageClass)}
	}
	if err := g.lockOnWrite(r.Context(), p.dstBucket, r.Header, &p.opts.Put); err != nil {
		return err
	}
	info, err := g.be.CopyObject(r.Context(), p.srcBucket, src.stored, p.dstBucket, stored, p.opts)
	if err != nil {
		return src.notFound(err)
	}
	if src.id != "" {
		w.Header().Set("X-Amz-Copy-Source-Version-Id", src.id)
	}
	setWrittenVersion(w.Header(), vid)
	return writeXML(w, http.StatusOK, copyObjectResult{LastModified: xmlTime(info.ModTime), ETag: quoteETag(info.ETag),
		objectChecksumXML: objectChecksumOf(info.Checksum)})
}

// checkCopySource resolves the source's version, reads its record and
// evaluates x-amz-copy-source-if-* against it (preconditions.checkCopy).
// The check and the copy are not atomic; a source replaced in between is
// copied anyway.
func (g *gateway) checkCopySource(r *http.Request, p copyRequest) (target, object.ObjectInfo, error) {
	t, info, err := g.copySource(r.Context(), p.srcBucket, p.srcKey, p.srcVersion)
	if err != nil {
		return target{}, object.ObjectInfo{}, err
	}
	return t, info, p.srcCond.checkCopy(info, time.Now())
}
