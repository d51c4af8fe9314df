package gateway

import (
	"net/http"
	"net/url"
	"strings"

	"tessera/object"
	"tessera/versioning"
)

// list runs the backend listing; max-keys=0 asks for nothing and gets an
// empty, untruncated page without a backend call.
func (g *gateway) list(r *http.Request, p listRequest) (object.ListResult, error) {
	if p.maxKeys == 0 {
		if _, err := g.be.HeadBucket(r.Context(), p.bucket); err != nil {
			return object.ListResult{}, err
		}
		return object.ListResult{}, nil
	}
	st, err := g.versioningStatus(r.Context(), p.bucket)
	if err != nil {
		return object.ListResult{}, err
	}
	if st != versioning.Unversioned {
		return g.listLatest(r.Context(), p)
	}
	return g.be.ListObjects(r.Context(), p.bucket, object.ListOptions{
		Prefix: p.prefix, Delimiter: p.delimiter, After: p.after, MaxKeys: p.maxKeys,
	})
}

func (g *gateway) listObjectsV2(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("list-type") != "2" {
		return g.listObjectsV1(w, r)
	}
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	p, err := parseObjectList(bucket, r.URL.Query(), true)
	if err != nil {
		return err
	}
	res, err := g.list(r, p)
	if err != nil {
		return err
	}
	enc := p.encoder()
	var own *ownerXML
	if p.fetchOwner {
		o := requestOwner(r)
		own = &o
	}
	// ContinuationToken is echoed as sent and never URL-encoded: clients
	// pass it back verbatim.
	out := listBucketResultV2{
		Name: p.bucket, Prefix: echo(p.hasPrefix, enc(p.prefix)), Delimiter: enc(p.delimiter), MaxKeys: p.maxKeys,
		IsTruncated: res.IsTruncated, ContinuationToken: p.token, StartAfter: enc(p.startAfter),
		Contents: renderObjects(res.Objects, enc, own), CommonPrefixes: renderPrefixes(res.Prefixes, enc),
	}
	out.KeyCount = len(out.Contents) + len(out.CommonPrefixes)
	if res.IsTruncated {
		out.NextContinuationToken = encodeToken(res.NextAfter)
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	return writeXML(w, http.StatusOK, out)
}

func (g *gateway) listObjectsV1(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	p, err := parseObjectList(bucket, r.URL.Query(), false)
	if err != nil {
		return err
	}
	res, err := g.list(r, p)
	if err != nil {
		return err
	}
	enc := p.encoder()
	own := requestOwner(r)
	out := listBucketResultV1{
		Name: p.bucket, Prefix: echo(p.hasPrefix, enc(p.prefix)), Marker: echo(p.hasMarker, enc(p.marker)), MaxKeys: p.maxKeys,
		Delimiter: enc(p.delimiter), IsTruncated: res.IsTruncated,
		Contents: renderObjects(res.Objects, enc, &own), CommonPrefixes: renderPrefixes(res.Prefixes, enc),
	}
	// S3 documents NextMarker only with a delimiter, leaving clients to
	// continue from the last key otherwise. It is sent on every truncated
	// page here: its value is that same last key (or common prefix), so
	// clients that read it and clients that fall back agree.
	if res.IsTruncated {
		out.NextMarker = enc(res.NextAfter)
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	return writeXML(w, http.StatusOK, out)
}

// echo is an optional element's value: present, possibly empty, exactly
// when the request sent the parameter.
func echo(sent bool, v string) *string {
	if !sent {
		return nil
	}
	return &v
}

func (p listRequest) encoder() func(string) string { return urlEncoder(p.encodeURL) }

func urlEncoder(on bool) func(string) string {
	if on {
		return s3URLEncode
	}
	return func(s string) string { return s }
}

// renderObjects renders listing entries; own, when set, is every entry's
// Owner (tessera's objects all belong to the one account).
func renderObjects(objs []object.ObjectInfo, enc func(string) string, own *ownerXML) []objectXML {
	out := make([]objectXML, 0, len(objs))
	for _, o := range objs {
		sc := o.StorageClass
		if sc == "" {
			sc = storageStandard
		}
		out = append(out, objectXML{Key: enc(o.Key), LastModified: xmlTime(o.ModTime), ETag: quoteETag(o.ETag),
			ChecksumAlgorithm: string(o.Checksum.Algorithm), ChecksumType: string(o.Checksum.Type),
			Size: o.Size, StorageClass: sc, Owner: own})
	}
	return out
}

func renderPrefixes(prefixes []string, enc func(string) string) []prefixXML {
	out := make([]prefixXML, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, prefixXML{Prefix: enc(p)})
	}
	return out
}

// s3URLEncode is encoding-type=url as S3 applies it: form encoding of the
// UTF-8 bytes (A-Z a-z 0-9 - _ . ~ kept, space as "+", everything else
// %XX in upper case) except that "/" stays literal. Clients undo it with a
// form decode (botocore's unquote_plus, minio-go's QueryUnescape), so a
// literal "+" in a key must be, and is, sent as %2B.
func s3URLEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "%2F", "/")
}
