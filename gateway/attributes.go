package gateway

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"tessera/object"
)

// GetObjectAttributes (GET ?attributes) answers what HEAD answers in
// headers, plus what HEAD cannot: each part's size and checksum.

type objectAttributesResult struct {
	XMLName      xml.Name           `xml:"http://s3.amazonaws.com/doc/2006-03-01/ GetObjectAttributesResponse"`
	ETag         string             `xml:"ETag,omitempty"`
	Checksum     *objectChecksumXML `xml:"Checksum,omitempty"`
	ObjectParts  *objectPartsXML    `xml:"ObjectParts,omitempty"`
	StorageClass string             `xml:"StorageClass,omitempty"`
	ObjectSize   *int64             `xml:"ObjectSize,omitempty"`
}

type objectPartsXML struct {
	IsTruncated          bool          `xml:"IsTruncated"`
	MaxParts             int           `xml:"MaxParts"`
	NextPartNumberMarker int           `xml:"NextPartNumberMarker"`
	PartNumberMarker     int           `xml:"PartNumberMarker"`
	Parts                []attrPartXML `xml:"Part"`
	PartsCount           int           `xml:"PartsCount"`
}

type attrPartXML struct {
	checksumsXML
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
}

// The attributes a request may ask for, as S3 names them.
var objectAttributes = map[string]bool{"ETag": true, "Checksum": true, "ObjectParts": true, "StorageClass": true, "ObjectSize": true}

// attributesRequest is a parsed GetObjectAttributes.
type attributesRequest struct {
	want             map[string]bool
	maxParts, marker int
}

func parseAttributes(h http.Header) (attributesRequest, error) {
	p := attributesRequest{want: map[string]bool{}, maxParts: object.DefaultMaxKeys}
	for _, v := range h.Values("X-Amz-Object-Attributes") {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			if !objectAttributes[a] {
				return p, withFields(apiErrf(errInvalidArgument, "Invalid attribute name specified."),
					errorField{"ArgumentName", "x-amz-object-attributes"}, errorField{"ArgumentValue", a})
			}
			p.want[a] = true
		}
	}
	if len(p.want) == 0 {
		return p, apiErrf(errInvalidRequest, "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	var err error
	if p.maxParts, err = headerInt(h, "X-Amz-Max-Parts", object.DefaultMaxKeys); err != nil {
		return p, err
	}
	p.maxParts = min(p.maxParts, object.DefaultMaxKeys)
	if p.marker, err = headerInt(h, "X-Amz-Part-Number-Marker", 0); err != nil {
		return p, err
	}
	return p, nil
}

// headerInt reads a non-negative integer header, def when absent.
func headerInt(h http.Header, name string, def int) (int, error) {
	v := h.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, withFields(apiErrf(errInvalidArgument, "Invalid %s: %s", strings.ToLower(name), v),
			errorField{"ArgumentName", strings.ToLower(name)}, errorField{"ArgumentValue", v})
	}
	return n, nil
}

func (g *gateway) getObjectAttributes(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	if err := checkVersionID(r.URL.Query()); err != nil {
		return err
	}
	p, err := parseAttributes(r.Header)
	if err != nil {
		// S3 names a missing bucket before a bad attribute list.
		if _, berr := g.be.HeadBucket(r.Context(), bucket); berr != nil {
			return berr
		}
		return err
	}
	t, info, err := g.headVersion(r.Context(), w.Header(), bucket, key, r.URL.Query().Get("versionId"))
	if isCode(err, errMethodNotAllowed) {
		// GetObjectAttributes answers a marker named by ID as missing.
		err = apiErr(errNoSuchKey)
	}
	if err != nil {
		return err
	}
	setVersionHeaders(w.Header(), t.id, false)
	w.Header().Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	return writeXML(w, http.StatusOK, p.render(info))
}

func (p attributesRequest) render(info object.ObjectInfo) objectAttributesResult {
	var out objectAttributesResult
	if p.want["ETag"] {
		out.ETag = info.ETag
	}
	if p.want["StorageClass"] {
		out.StorageClass = info.StorageClass
	}
	if p.want["ObjectSize"] {
		out.ObjectSize = &info.Size
	}
	if p.want["Checksum"] && !info.Checksum.IsZero() {
		// Here S3 gives a composite without its "-N"; the parts count is
		// in ObjectParts.
		c := info.Checksum
		c.Value, _, _ = strings.Cut(c.Value, "-")
		x := objectChecksumOf(c)
		out.Checksum = &x
	}
	if p.want["ObjectParts"] && info.Parts > 1 {
		out.ObjectParts = p.parts(info)
	}
	return out
}

// parts pages the part list after p.marker.
func (p attributesRequest) parts(info object.ObjectInfo) *objectPartsXML {
	op := &objectPartsXML{MaxParts: p.maxParts, PartNumberMarker: p.marker, PartsCount: info.Parts, Parts: []attrPartXML{}}
	for i, size := range info.PartSizes {
		n := i + 1
		if n <= p.marker {
			continue
		}
		if len(op.Parts) == p.maxParts {
			op.IsTruncated = true
			break
		}
		part := attrPartXML{PartNumber: n, Size: size}
		if !info.Checksum.Default && i < len(info.PartChecksums) {
			part.checksumsXML = checksumsFrom(map[string]string{info.Checksum.Algorithm.Lower(): info.PartChecksums[i]})
		}
		op.Parts = append(op.Parts, part)
		op.NextPartNumberMarker = n
	}
	return op
}
