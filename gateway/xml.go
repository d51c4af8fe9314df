package gateway

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Every S3 response document except errors is in the namespace
// http://s3.amazonaws.com/doc/2006-03-01/, spelled out in each XMLName tag
// because struct tags cannot refer to constants.

// iso8601 is the timestamp layout of S3 XML documents.
const iso8601 = "2006-01-02T15:04:05.000Z"

func xmlTime(t time.Time) string { return t.UTC().Format(iso8601) }

type ownerXML struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

// listAllMyBucketsResult is ListBuckets' response. ContinuationToken is
// the token for the next page (S3 names it so); Prefix echoes the prefix
// parameter when one was sent.
type listAllMyBucketsResult struct {
	XMLName           xml.Name   `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListAllMyBucketsResult"`
	Owner             ownerXML   `xml:"Owner"`
	Buckets           bucketList `xml:"Buckets"`
	ContinuationToken string     `xml:"ContinuationToken,omitempty"`
	Prefix            *string    `xml:"Prefix"`
}

// bucketList is <Buckets>, sent even when empty as S3 sends it: SDKs map
// a missing element to a missing field (boto3's response then has no
// "Buckets" key at all).
type bucketList []bucketXML

func (l bucketList) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return e.EncodeElement(struct {
		Bucket []bucketXML `xml:"Bucket"`
	}{l}, start)
}

func (l *bucketList) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	var v struct {
		Bucket []bucketXML `xml:"Bucket"`
	}
	if err := d.DecodeElement(&v, &start); err != nil {
		return err
	}
	*l = append(*l, v.Bucket...)
	return nil
}

type bucketXML struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion"`
}

type locationConstraint struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
	Location string   `xml:",chardata"`
}

type versioningConfiguration struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ VersioningConfiguration"`
	Status  string   `xml:"Status,omitempty"`
}

type objectXML struct {
	Key               string    `xml:"Key"`
	LastModified      string    `xml:"LastModified"`
	ETag              string    `xml:"ETag"`
	ChecksumAlgorithm string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string    `xml:"ChecksumType,omitempty"`
	Size              int64     `xml:"Size"`
	StorageClass      string    `xml:"StorageClass"`
	Owner             *ownerXML `xml:"Owner,omitempty"`
}

type prefixXML struct {
	Prefix string `xml:"Prefix"`
}

// listBucketResultV2 is ListObjectsV2's response. Prefix (and v1's
// Marker) are elements only when the request sent the parameter: S3 sends
// them empty, versitygw's suite expects them absent, and SDKs read both
// as "no prefix".
type listBucketResultV2 struct {
	XMLName               xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string      `xml:"Name"`
	Prefix                *string     `xml:"Prefix"`
	Delimiter             string      `xml:"Delimiter,omitempty"`
	MaxKeys               int         `xml:"MaxKeys"`
	KeyCount              int         `xml:"KeyCount"`
	IsTruncated           bool        `xml:"IsTruncated"`
	EncodingType          string      `xml:"EncodingType,omitempty"`
	ContinuationToken     string      `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	StartAfter            string      `xml:"StartAfter,omitempty"`
	Contents              []objectXML `xml:"Contents"`
	CommonPrefixes        []prefixXML `xml:"CommonPrefixes"`
}

// listBucketResultV1 is ListObjects' (version 1) response.
type listBucketResultV1 struct {
	XMLName        xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name           string      `xml:"Name"`
	Prefix         *string     `xml:"Prefix"`
	Marker         *string     `xml:"Marker"`
	NextMarker     string      `xml:"NextMarker,omitempty"`
	MaxKeys        int         `xml:"MaxKeys"`
	Delimiter      string      `xml:"Delimiter,omitempty"`
	IsTruncated    bool        `xml:"IsTruncated"`
	EncodingType   string      `xml:"EncodingType,omitempty"`
	Contents       []objectXML `xml:"Contents"`
	CommonPrefixes []prefixXML `xml:"CommonPrefixes"`
}

type copyObjectResult struct {
	XMLName      xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyObjectResult"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	objectChecksumXML
}

type initiateMultipartUploadResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ InitiateMultipartUploadResult"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

type completeMultipartUploadResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUploadResult"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
	objectChecksumXML
}

type partXML struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	checksumsXML
}

type listPartsResult struct {
	XMLName              xml.Name  `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListPartsResult"`
	Bucket               string    `xml:"Bucket"`
	Key                  string    `xml:"Key"`
	UploadID             string    `xml:"UploadId"`
	Initiator            ownerXML  `xml:"Initiator"`
	Owner                ownerXML  `xml:"Owner"`
	StorageClass         string    `xml:"StorageClass"`
	PartNumberMarker     int       `xml:"PartNumberMarker"`
	NextPartNumberMarker int       `xml:"NextPartNumberMarker"`
	MaxParts             int       `xml:"MaxParts"`
	IsTruncated          bool      `xml:"IsTruncated"`
	Parts                []partXML `xml:"Part"`
	// S3 names a missing algorithm and type "null" in ListParts.
	ChecksumAlgorithm string `xml:"ChecksumAlgorithm"`
	ChecksumType      string `xml:"ChecksumType"`
}

// nullable is v, or "null" when empty.
func nullable(v string) string {
	if v == "" {
		return "null"
	}
	return v
}

type deletedXML struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          *bool  `xml:"DeleteMarker"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type deleteErrorXML struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

type deleteResult struct {
	XMLName xml.Name         `xml:"http://s3.amazonaws.com/doc/2006-03-01/ DeleteResult"`
	Deleted []deletedXML     `xml:"Deleted"`
	Errors  []deleteErrorXML `xml:"Error"`
}

// writeXML renders v with the XML declaration. The document is encoded
// before anything is sent so an encoding failure can still become an
// error response.
func writeXML(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(v); err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}
