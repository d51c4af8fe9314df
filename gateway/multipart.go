package gateway

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"tessera/object"
)

// completeMultipartXML is CompleteMultipartUpload's body. A part's
// checksum elements must match the checksums it was uploaded with.
type completeMultipartXML struct {
	XMLName xml.Name `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber *int    `xml:"PartNumber"`
		ETag       *string `xml:"ETag"`
		checksumsXML
	} `xml:"Part"`
}

// parseCompleteMultipart parses a CompleteMultipartUpload body into parts
// with unquoted ETags, checking what S3 checks before it looks at the
// upload: an empty or part-less body, or a part without PartNumber or
// ETag, is MalformedXML; a part number below 1 is InvalidArgument; part
// numbers must strictly ascend (a repeated number is InvalidPartOrder).
// A number past 10000 names no uploaded part, so it fails later as
// InvalidPart, as in S3.
func parseCompleteMultipart(body []byte) ([]object.CompletePart, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apiErr(errMalformedXML)
	}
	var doc completeMultipartXML
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Parts) == 0 {
		return nil, apiErr(errMalformedXML)
	}
	parts := make([]object.CompletePart, 0, len(doc.Parts))
	for i, p := range doc.Parts {
		if p.PartNumber == nil || p.ETag == nil {
			return nil, apiErr(errMalformedXML)
		}
		n := *p.PartNumber
		if n < 1 {
			return nil, apiErrf(errInvalidArgument, "PartNumber must be >= 1")
		}
		if i > 0 && n <= parts[i-1].Number {
			return nil, apiErr(errInvalidPartOrder)
		}
		etag := unquoteETag(*p.ETag)
		if etag == "" {
			return nil, apiErr(errInvalidPart)
		}
		sums, err := parsePartChecksums(p.checksumsXML)
		if err != nil {
			return nil, err
		}
		parts = append(parts, object.CompletePart{Number: n, ETag: etag, Checksums: sums})
	}
	return parts, nil
}

// parsePartNumber reads partNumber: an integer in 1..10000.
func parsePartNumber(q url.Values) (int, error) {
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > object.MaxPartNumber {
		return 0, apiErr(errInvalidPartNumber)
	}
	return n, nil
}

func (g *gateway) createMultipart(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	opts, err := parsePutOptions(r.Header)
	if err != nil {
		return err
	}
	if opts.ChecksumAlgorithm, opts.ChecksumType, err = parseMultipartChecksum(r.Header); err != nil {
		return err
	}
	if err := g.lockOnWrite(r.Context(), bucket, r.Header, &opts); err != nil {
		return err
	}
	id, err := g.be.NewMultipart(r.Context(), bucket, key, opts)
	if err != nil {
		return err
	}
	if opts.ChecksumAlgorithm != "" {
		w.Header().Set("X-Amz-Checksum-Algorithm", string(opts.ChecksumAlgorithm))
		w.Header().Set("X-Amz-Checksum-Type", string(opts.ChecksumType))
	}
	return writeXML(w, http.StatusOK, initiateMultipartUploadResult{Bucket: bucket, Key: key, UploadID: id})
}

func (g *gateway) uploadPart(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	number, err := parsePartNumber(q)
	if err != nil {
		return err
	}
	md5sum, err := contentMD5(r.Header)
	if err != nil {
		return err
	}
	size, err := bodySize(r, object.MaxPartSize)
	if err != nil {
		return err
	}
	body := verifiedBody{Reader: sizedBody(r.Body, size), req: r}
	part, err := g.be.PutPart(r.Context(), bucket, key, q.Get("uploadId"), number, body, size, md5sum)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", quoteETag(part.ETag))
	setChecksumHeaders(w.Header(), part.Checksums)
	w.WriteHeader(http.StatusOK)
	return nil
}

// parseCompleteOptions reads CompleteMultipartUpload's headers: the
// object checksum, x-amz-mp-object-size and the conditional write.
func parseCompleteOptions(h http.Header) (object.CompleteOptions, error) {
	opts, err := parseCompleteChecksum(h)
	if err != nil {
		return opts, err
	}
	if opts.IfMatch, opts.IfNoneMatch, err = parseWriteConditions(h); err != nil {
		return opts, err
	}
	opts.ObjectSize, err = parseObjectSize(h)
	return opts, err
}

func (g *gateway) completeMultipart(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	opts, err := parseCompleteOptions(r.Header)
	if err != nil {
		return err
	}
	body, err := g.readBody(w, r)
	if err != nil {
		return err
	}
	parts, err := parseCompleteMultipart(body)
	if err != nil {
		return err
	}
	uploadID := r.URL.Query().Get("uploadId")
	stored, vid, err := g.newVersion(r.Context(), bucket, key)
	if err != nil {
		return err
	}
	if stored != key {
		opts.VersionKey = stored
	}
	if vid != "" {
		opts.Current = g.current(bucket, key)
	}
	info, err := g.be.CompleteMultipart(r.Context(), bucket, key, uploadID, parts, opts)
	if err != nil {
		return completeFailure(err, uploadID)
	}
	setWrittenVersion(w.Header(), vid)
	return writeXML(w, http.StatusOK, completeMultipartUploadResult{
		Location: objectLocation(r, bucket, key), Bucket: bucket, Key: key, ETag: quoteETag(info.ETag),
		objectChecksumXML: objectChecksumOf(info.Checksum),
	})
}

func (g *gateway) abortMultipart(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	opts := parseAbortOptions(r.Header, time.Now())
	if err := g.be.AbortMultipart(r.Context(), bucket, key, r.URL.Query().Get("uploadId"), opts); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listPartsRequest is a parsed ListParts.
type listPartsRequest struct {
	bucket, key, uploadID string
	marker, maxParts      int
}

func parseListParts(r *http.Request) (listPartsRequest, error) {
	bucket, key, err := objectParams(r)
	if err != nil {
		return listPartsRequest{}, err
	}
	q := r.URL.Query()
	p := listPartsRequest{bucket: bucket, key: key, uploadID: q.Get("uploadId")}
	p.marker, p.maxParts, err = parsePartList(q)
	return p, err
}

func (g *gateway) listParts(w http.ResponseWriter, r *http.Request) error {
	p, err := parseListParts(r)
	if err != nil {
		return err
	}
	// The backend reads a limit of 0 as its default, so max-parts=0 asks
	// for one part (which also checks the upload exists) and shows none.
	res, err := g.be.ListParts(r.Context(), p.bucket, p.key, p.uploadID, p.marker, max(p.maxParts, 1))
	if err != nil {
		return err
	}
	if p.maxParts == 0 {
		res.Parts, res.IsTruncated, res.NextPartNumberMarker = nil, false, 0
	}
	sc := res.StorageClass
	if sc == "" {
		sc = storageStandard
	}
	out := listPartsResult{
		Bucket: p.bucket, Key: p.key, UploadID: p.uploadID, Initiator: requestOwner(r), Owner: requestOwner(r),
		StorageClass: sc, PartNumberMarker: p.marker, NextPartNumberMarker: res.NextPartNumberMarker,
		MaxParts: p.maxParts, IsTruncated: res.IsTruncated, Parts: make([]partXML, 0, len(res.Parts)),
		ChecksumAlgorithm: nullable(string(res.ChecksumAlgorithm)), ChecksumType: nullable(string(res.ChecksumType)),
	}
	for _, part := range res.Parts {
		out.Parts = append(out.Parts, partXML{
			PartNumber: part.Number, LastModified: xmlTime(part.ModTime), ETag: quoteETag(part.ETag), Size: part.Size,
			checksumsXML: checksumsFrom(part.Checksums),
		})
	}
	return writeXML(w, http.StatusOK, out)
}

// objectLocation is the URL CompleteMultipartUpload reports for the object.
func objectLocation(r *http.Request, bucket, key string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: r.Host, Path: "/" + bucket + "/" + key}
	return u.String()
}
