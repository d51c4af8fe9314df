package gateway

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"

	"tessera/meta"
	"tessera/object"
	"tessera/versioning"
)

// ListObjectVersions: every version and delete marker of each key, in
// S3's order (versioning.Order), the null version included; in a bucket
// never versioned each object is its one version, the null version.

// versionListRequest is a parsed ListObjectVersions query.
type versionListRequest struct {
	listRequest
	keyMarker, versionIDMarker string
}

// parseVersionLimit reads ListObjectVersions' max-keys, whose negative
// refusal S3 words apart from the other listings'.
func parseVersionLimit(q url.Values) (int, error) {
	if v := q.Get("max-keys"); strings.HasPrefix(v, "-") {
		if _, ok := parseInt32(v); ok {
			return 0, withFields(apiErrf(errInvalidArgument, "max-keys cannot be negative"),
				errorField{"ArgumentName", "maxKeys"}, errorField{"ArgumentValue", v})
		}
	}
	return parseLimit(q, "max-keys")
}

// parseVersionList reads a ListObjectVersions query. A page resumes after
// key-marker's version version-id-marker, or after all of key-marker's
// versions when it has none.
func parseVersionList(bucket string, q url.Values) (versionListRequest, error) {
	lr := listRequest{bucket: bucket, prefix: q.Get("prefix"), hasPrefix: true, delimiter: q.Get("delimiter")}
	var err error
	if lr.maxKeys, err = parseVersionLimit(q); err != nil {
		return versionListRequest{}, err
	}
	if lr.encodeURL, err = parseEncodingType(q); err != nil {
		return versionListRequest{}, err
	}
	p := versionListRequest{listRequest: lr, keyMarker: q.Get("key-marker"), versionIDMarker: q.Get("version-id-marker")}
	switch {
	case p.versionIDMarker != "" && p.keyMarker == "":
		return versionListRequest{}, apiErrf(errInvalidArgument, "A version-id marker cannot be specified without a key marker.")
	case p.versionIDMarker != "" && p.versionIDMarker != versioning.NullVersionID && !meta.ValidVersionID(p.versionIDMarker):
		return versionListRequest{}, apiErr(errInvalidVersionID)
	}
	p.after = p.keyMarker
	return p, nil
}

type listVersionsResult struct {
	XMLName             xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListVersionsResult"`
	Name                string      `xml:"Name"`
	Prefix              string      `xml:"Prefix"`
	KeyMarker           string      `xml:"KeyMarker"`
	VersionIDMarker     string      `xml:"VersionIdMarker"`
	NextKeyMarker       string      `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string      `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int         `xml:"MaxKeys"`
	Delimiter           string      `xml:"Delimiter,omitempty"`
	IsTruncated         bool        `xml:"IsTruncated"`
	EncodingType        string      `xml:"EncodingType,omitempty"`
	Entries             []any       `xml:"Version"` // versionXML and deleteMarkerXML, in order
	CommonPrefixes      []prefixXML `xml:"CommonPrefixes"`
}

// versionXML is a Version element. Its XMLName keeps the element's name
// in the mixed Entries list.
type versionXML struct {
	XMLName           xml.Name  `xml:"Version"`
	Key               string    `xml:"Key"`
	VersionID         string    `xml:"VersionId"`
	IsLatest          bool      `xml:"IsLatest"`
	LastModified      string    `xml:"LastModified"`
	ETag              string    `xml:"ETag"`
	ChecksumAlgorithm string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string    `xml:"ChecksumType,omitempty"`
	Size              int64     `xml:"Size"`
	StorageClass      string    `xml:"StorageClass"`
	Owner             *ownerXML `xml:"Owner,omitempty"`
}

// deleteMarkerXML is a DeleteMarker element.
type deleteMarkerXML struct {
	XMLName      xml.Name  `xml:"DeleteMarker"`
	Key          string    `xml:"Key"`
	VersionID    string    `xml:"VersionId"`
	IsLatest     bool      `xml:"IsLatest"`
	LastModified string    `xml:"LastModified"`
	Owner        *ownerXML `xml:"Owner,omitempty"`
}

func (g *gateway) listObjectVersions(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	p, err := parseVersionList(bucket, r.URL.Query())
	if err != nil {
		return err
	}
	enc := p.encoder()
	own := requestOwner(r)
	out := listVersionsResult{
		Name: p.bucket, Prefix: enc(p.prefix), KeyMarker: enc(p.keyMarker), VersionIDMarker: p.versionIDMarker,
		MaxKeys: p.maxKeys, Delimiter: enc(p.delimiter), Entries: []any{}, CommonPrefixes: []prefixXML{},
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	if p.maxKeys == 0 {
		if _, err := g.be.HeadBucket(r.Context(), p.bucket); err != nil {
			return err
		}
		return writeXML(w, http.StatusOK, out)
	}
	pg := versionPage{max: p.maxKeys, enc: enc, own: &own, out: &out}
	if err := g.scanVersions(r.Context(), p, pg.add); err != nil {
		return err
	}
	if !out.IsTruncated {
		out.NextKeyMarker, out.NextVersionIDMarker = "", ""
	}
	return writeXML(w, http.StatusOK, out)
}

// versionPage fills one ListObjectVersions page.
type versionPage struct {
	max int
	n   int
	enc func(string) string
	own *ownerXML
	out *listVersionsResult
}

// add takes one version (or, with prefix set, a common prefix) and
// reports whether the page has room for more. A page that is full when
// another line comes is truncated, its next markers naming its last line.
func (pg *versionPage) add(v versioning.Version, info object.ObjectInfo, prefix string) bool {
	if pg.n == pg.max {
		pg.out.IsTruncated = true
		return false
	}
	pg.n++
	if prefix != "" {
		pg.out.CommonPrefixes = append(pg.out.CommonPrefixes, prefixXML{Prefix: pg.enc(prefix)})
		pg.out.NextKeyMarker, pg.out.NextVersionIDMarker = pg.enc(prefix), ""
		return true
	}
	mod := xmlTime(info.ModTime)
	if v.DeleteMarker {
		pg.out.Entries = append(pg.out.Entries, deleteMarkerXML{Key: pg.enc(v.Key), VersionID: v.ID,
			IsLatest: v.IsLatest, LastModified: mod, Owner: pg.own})
	} else {
		o := renderObjects([]object.ObjectInfo{info}, pg.enc, pg.own)[0]
		pg.out.Entries = append(pg.out.Entries, versionXML{Key: pg.enc(v.Key), VersionID: v.ID, IsLatest: v.IsLatest,
			LastModified: o.LastModified, ETag: o.ETag, ChecksumAlgorithm: o.ChecksumAlgorithm,
			ChecksumType: o.ChecksumType, Size: o.Size, StorageClass: o.StorageClass, Owner: o.Owner})
	}
	pg.out.NextKeyMarker, pg.out.NextVersionIDMarker = pg.enc(v.Key), v.ID
	return true
}

// scanVersions calls add with each version and common prefix the
// request's page may hold, in order, until add returns false. A
// version-id-marker resumes within the marker key's versions, which are
// read first on their own.
func (g *gateway) scanVersions(ctx context.Context, p versionListRequest, add func(versioning.Version, object.ObjectInfo, string) bool) error {
	if p.versionIDMarker != "" && strings.HasPrefix(p.keyMarker, p.prefix) {
		objs, err := g.storedVersions(ctx, p.bucket, p.keyMarker, 0)
		if err != nil {
			return err
		}
		if !emitVersions(objs, p.versionIDMarker, add) {
			return nil
		}
	}
	scan := versioning.Scan{Bucket: p.bucket, Prefix: p.prefix, Delimiter: p.delimiter, After: p.keyMarker}
	return scan.Run(ctx, g.be, func(k versioning.Group) bool {
		if k.Prefix != "" {
			return add(versioning.Version{}, object.ObjectInfo{}, k.Prefix)
		}
		return emitVersions(k.Stored, "", add)
	})
}

// emitVersions orders a key's stored objects as S3 lists its versions and
// passes them to add, those up to and including the version marker left
// out ("" for none), until add returns false; it reports whether add
// wants more.
func emitVersions(objs []object.ObjectInfo, marker string, add func(versioning.Version, object.ObjectInfo, string) bool) bool {
	vs, byKey := versioning.Versions(objs)
	if marker != "" {
		vs = resumeAfter(vs, marker)
	}
	for _, v := range vs {
		if !add(v, byKey[v.StoredKey], "") {
			return false
		}
	}
	return true
}

// resumeAfter is the part of a key's ordered versions after the version
// marker. A marker version deleted since places the rest by its ID, which
// sorts newest first; a deleted null version, whose time is gone, ends
// the key.
func resumeAfter(vs []versioning.Version, marker string) []versioning.Version {
	for i, v := range vs {
		if v.ID == marker {
			return vs[i+1:]
		}
	}
	if marker == versioning.NullVersionID {
		return nil
	}
	for i, v := range vs {
		after := v.ID > marker
		if v.ID == versioning.NullVersionID {
			after = v.ModTime.UnixNano() < meta.VersionNanos(marker)
		}
		if after {
			return vs[i:]
		}
	}
	return nil
}
