package gateway

import (
	"encoding/xml"
	"net/http"
	"net/url"
)

// ListObjectVersions. Versioning is never enabled on a tessera bucket
// (GetBucketVersioning reports no status), so each object is its one
// version, the "null" version, and the latest; there are no delete
// markers. That is what S3 answers for a bucket that never had versioning
// enabled, and what clients that clean up by versions expect: boto3's
// bucket.object_versions.delete() lists versions, then deletes each by
// its version id, "null".

// nullVersion is the version id of an object written while a bucket is
// not versioned.
const nullVersion = "null"

// versionListRequest is a parsed ListObjectVersions query.
type versionListRequest struct {
	listRequest
	keyMarker, versionIDMarker string
}

// parseVersionList reads a ListObjectVersions query. A page resumes after
// key-marker: with one version per key, every version of the marker's key
// (its null version) came before, with or without version-id-marker.
func parseVersionList(bucket string, q url.Values) (versionListRequest, error) {
	lr := listRequest{bucket: bucket, prefix: q.Get("prefix"), hasPrefix: true, delimiter: q.Get("delimiter")}
	var err error
	if lr.maxKeys, err = parseLimit(q, "max-keys"); err != nil {
		return versionListRequest{}, err
	}
	if lr.encodeURL, err = parseEncodingType(q); err != nil {
		return versionListRequest{}, err
	}
	p := versionListRequest{listRequest: lr, keyMarker: q.Get("key-marker"), versionIDMarker: q.Get("version-id-marker")}
	switch {
	case p.versionIDMarker != "" && p.keyMarker == "":
		return versionListRequest{}, apiErrf(errInvalidArgument, "A version-id marker cannot be specified without a key marker.")
	case p.versionIDMarker != "" && p.versionIDMarker != nullVersion:
		return versionListRequest{}, apiErr(errInvalidVersionID)
	}
	p.after = p.keyMarker
	return p, nil
}

type listVersionsResult struct {
	XMLName             xml.Name     `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListVersionsResult"`
	Name                string       `xml:"Name"`
	Prefix              string       `xml:"Prefix"`
	KeyMarker           string       `xml:"KeyMarker"`
	VersionIDMarker     string       `xml:"VersionIdMarker"`
	NextKeyMarker       string       `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string       `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int          `xml:"MaxKeys"`
	Delimiter           string       `xml:"Delimiter,omitempty"`
	IsTruncated         bool         `xml:"IsTruncated"`
	EncodingType        string       `xml:"EncodingType,omitempty"`
	Versions            []versionXML `xml:"Version"`
	CommonPrefixes      []prefixXML  `xml:"CommonPrefixes"`
}

type versionXML struct {
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

func (g *gateway) listObjectVersions(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	p, err := parseVersionList(bucket, r.URL.Query())
	if err != nil {
		return err
	}
	res, err := g.list(r, p.listRequest)
	if err != nil {
		return err
	}
	enc := p.encoder()
	own := requestOwner(r)
	out := listVersionsResult{
		Name: p.bucket, Prefix: enc(p.prefix), KeyMarker: enc(p.keyMarker), VersionIDMarker: p.versionIDMarker,
		MaxKeys: p.maxKeys, Delimiter: enc(p.delimiter), IsTruncated: res.IsTruncated,
		Versions: make([]versionXML, 0, len(res.Objects)), CommonPrefixes: renderPrefixes(res.Prefixes, enc),
	}
	for _, o := range renderObjects(res.Objects, enc, &own) {
		out.Versions = append(out.Versions, versionXML{Key: o.Key, VersionID: nullVersion, IsLatest: true,
			LastModified: o.LastModified, ETag: o.ETag, ChecksumAlgorithm: o.ChecksumAlgorithm,
			ChecksumType: o.ChecksumType, Size: o.Size, StorageClass: o.StorageClass, Owner: o.Owner})
	}
	if res.IsTruncated {
		out.NextKeyMarker = enc(res.NextAfter)
		// A page that ends on a version names it; one that ends on a
		// common prefix has no version to name.
		if n := len(res.Objects); n > 0 && res.Objects[n-1].Key == res.NextAfter {
			out.NextVersionIDMarker = nullVersion
		}
	}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	return writeXML(w, http.StatusOK, out)
}
