package gateway

import (
	"context"
	"encoding/xml"
	"net/http"

	"tessera/object"
)

// tagging is the GetObjectTagging response and PutObjectTagging body.
type tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	TagSet  struct {
		Tags []tag `xml:"Tag"`
	} `xml:"TagSet"`
}

// writeTagging answers a GetObjectTagging or GetBucketTagging.
func writeTagging(w http.ResponseWriter, tags []tag) error {
	out := tagging{Xmlns: "http://s3.amazonaws.com/doc/2006-03-01/"}
	out.TagSet.Tags = tags
	if out.TagSet.Tags == nil {
		out.TagSet.Tags = []tag{}
	}
	return writeXML(w, http.StatusOK, out)
}

// readTagging reads a PutObjectTagging or PutBucketTagging body's tag
// set, unchecked: the limits differ between the two.
func (g *gateway) readTagging(w http.ResponseWriter, r *http.Request) ([]tag, error) {
	body, err := g.readBody(w, r)
	if err != nil {
		return nil, err
	}
	var in tagging
	if err := xml.Unmarshal(body, &in); err != nil {
		return nil, apiErr(errMalformedXML)
	}
	return in.TagSet.Tags, nil
}

func (g *gateway) getObjectTagging(w http.ResponseWriter, r *http.Request) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	t, info, err := g.taggedVersion(w, r, bucket, key)
	if err != nil {
		return err
	}
	setVersionHeaders(w.Header(), t.id, false)
	tags, _ := parseTagQuery(info.Headers[tagsHeader])
	return writeTagging(w, tags)
}

func (g *gateway) putObjectTagging(w http.ResponseWriter, r *http.Request) error {
	tags, err := g.readTagging(w, r)
	if err != nil {
		return err
	}
	if err := validateTags(tags); err != nil {
		return err
	}
	return g.replaceTags(w, r, encodeTags(tags), http.StatusOK)
}

func (g *gateway) deleteObjectTagging(w http.ResponseWriter, r *http.Request) error {
	return g.replaceTags(w, r, "", http.StatusNoContent)
}

// replaceTags rewrites the object with the same bytes and metadata and the
// new tags. Tags live in the object's metadata record, and the layer
// updates records only by writing a new version; so a tag change costs a
// copy, gives a single-part object a new Last-Modified (and a multipart
// one a single-part ETag), and races like any other write with a
// concurrent PUT of the key.
func (g *gateway) replaceTags(w http.ResponseWriter, r *http.Request, encoded string, status int) error {
	bucket, key, err := objectParams(r)
	if err != nil {
		return err
	}
	t, info, err := g.taggedVersion(w, r, bucket, key)
	if err != nil {
		return err
	}
	setVersionHeaders(w.Header(), t.id, false)
	headers := map[string]string{}
	for k, v := range info.Headers {
		headers[k] = v
	}
	if encoded == "" {
		if _, ok := headers[tagsHeader]; !ok {
			w.WriteHeader(status)
			return nil
		}
		delete(headers, tagsHeader)
	} else {
		headers[tagsHeader] = encoded
	}
	if err := g.rewriteRecord(r.Context(), bucket, t, info, headers); err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}

// rewriteRecord rewrites the version t with the same bytes and metadata
// and the stored headers given: how tags and lock state change.
func (g *gateway) rewriteRecord(ctx context.Context, bucket string, t target, info object.ObjectInfo, headers map[string]string) error {
	opts := object.PutOptions{ContentType: info.ContentType, UserMeta: info.UserMeta, Headers: headers, IfMatch: info.ETag}
	if _, err := g.be.RewriteObject(ctx, bucket, t.stored, opts); err != nil {
		return t.notFound(err)
	}
	return nil
}

// taggedVersion is the version a tagging request addresses (?versionId,
// or the latest) and its record.
func (g *gateway) taggedVersion(w http.ResponseWriter, r *http.Request, bucket, key string) (target, object.ObjectInfo, error) {
	q := r.URL.Query()
	if err := checkVersionID(q); err != nil {
		return target{}, object.ObjectInfo{}, err
	}
	return g.headVersion(r.Context(), w.Header(), bucket, key, q.Get("versionId"))
}
