package gateway

import (
	"context"
	"encoding/xml"
	"net/http"
	"strconv"

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
	q := r.URL.Query()
	max := object.DefaultMaxKeys
	if q.Has("max-uploads") {
		n, err := strconv.Atoi(q.Get("max-uploads"))
		if err != nil || n < 0 {
			return apiErrf(errInvalidArgument, "Argument max-uploads must be an integer between 0 and 2147483647.")
		}
		max = min(n, object.DefaultMaxKeys)
	}
	enc := func(s string) string { return s }
	switch et := q.Get("encoding-type"); et {
	case "":
	case "url":
		enc = s3URLEncode
	default:
		return apiErr(errInvalidEncodingType)
	}
	opts := object.ListUploadsOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: max}
	out := listMultipartUploadsResult{Bucket: bucket, KeyMarker: enc(opts.KeyMarker), UploadIDMarker: opts.UploadIDMarker,
		Prefix: enc(opts.Prefix), Delimiter: enc(opts.Delimiter), MaxUploads: max, EncodingType: q.Get("encoding-type")}
	if max > 0 {
		res, err := ul.ListUploads(r.Context(), bucket, opts)
		if err != nil {
			return err
		}
		out.IsTruncated = res.IsTruncated
		out.NextKeyMarker, out.NextUploadIDMarker = enc(res.NextKeyMarker), res.NextUploadIDMarker
		for _, u := range res.Uploads {
			out.Uploads = append(out.Uploads, uploadXML{Key: enc(u.Key), UploadID: u.UploadID, Initiator: owner,
				Owner: owner, StorageClass: u.StorageClass, Initiated: xmlTime(u.Initiated),
				ChecksumAlgorithm: string(u.ChecksumAlgorithm), ChecksumType: string(u.ChecksumType)})
		}
		out.CommonPrefixes = renderPrefixes(res.Prefixes, enc)
	}
	return writeXML(w, http.StatusOK, out)
}
