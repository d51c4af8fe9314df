package gateway

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"

	"tessera/object"
)

// uploadLister is the optional Backend method behind ListMultipartUploads;
// *object.Layer implements it. A Backend without it answers 501.
type uploadLister interface {
	ListUploads(ctx context.Context, bucket string, opts object.ListUploadsOptions) (object.ListUploadsResult, error)
}

type listMultipartUploadsResult struct {
	XMLName            xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListMultipartUploadsResult"`
	Bucket             string      `xml:"Bucket"`
	KeyMarker          string      `xml:"KeyMarker"`
	UploadIDMarker     string      `xml:"UploadIdMarker"`
	NextKeyMarker      string      `xml:"NextKeyMarker"`
	NextUploadIDMarker string      `xml:"NextUploadIdMarker"`
	Prefix             string      `xml:"Prefix"`
	Delimiter          string      `xml:"Delimiter,omitempty"`
	MaxUploads         int         `xml:"MaxUploads"`
	IsTruncated        bool        `xml:"IsTruncated"`
	EncodingType       string      `xml:"EncodingType,omitempty"`
	Uploads            []uploadXML `xml:"Upload"`
	CommonPrefixes     []prefixXML `xml:"CommonPrefixes"`
}

type uploadXML struct {
	Key          string   `xml:"Key"`
	UploadID     string   `xml:"UploadId"`
	Initiator    ownerXML `xml:"Initiator"`
	Owner        ownerXML `xml:"Owner"`
	StorageClass string   `xml:"StorageClass"`
	Initiated    string   `xml:"Initiated"`
	// ChecksumAlgorithm and ChecksumType are the upload's, when it has one.
	ChecksumAlgorithm string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string `xml:"ChecksumType,omitempty"`
}

func (g *gateway) listMultipartUploads(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	ul, ok := g.be.(uploadLister)
	if !ok {
		return apiErr(errNotImplemented)
	}
	p, err := parseUploadList(r.URL.Query())
	if err != nil {
		return err
	}
	enc, opts := urlEncoder(p.encodeURL), p.opts
	out := listMultipartUploadsResult{Bucket: bucket, KeyMarker: enc(opts.KeyMarker), UploadIDMarker: opts.UploadIDMarker,
		Prefix: enc(opts.Prefix), Delimiter: enc(opts.Delimiter), MaxUploads: opts.MaxUploads}
	if p.encodeURL {
		out.EncodingType = "url"
	}
	if opts.MaxUploads == 0 {
		if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
			return err
		}
		return writeXML(w, http.StatusOK, out)
	}
	res, err := ul.ListUploads(r.Context(), bucket, opts)
	if errors.Is(err, object.ErrUploadIDMarker) {
		return apiErrf(errInvalidArgument, "Invalid uploadId marker")
	}
	if err != nil {
		return err
	}
	out.IsTruncated = res.IsTruncated
	out.NextKeyMarker, out.NextUploadIDMarker = enc(res.NextKeyMarker), res.NextUploadIDMarker
	own := requestOwner(r)
	for _, u := range res.Uploads {
		out.Uploads = append(out.Uploads, uploadXML{Key: enc(u.Key), UploadID: u.UploadID, Initiator: own,
			Owner: own, StorageClass: u.StorageClass, Initiated: xmlTime(u.Initiated),
			ChecksumAlgorithm: string(u.ChecksumAlgorithm), ChecksumType: string(u.ChecksumType)})
	}
	out.CommonPrefixes = renderPrefixes(res.Prefixes, enc)
	return writeXML(w, http.StatusOK, out)
}
