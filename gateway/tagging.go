package gateway

import (
	"context"
	"encoding/xml"
	"maps"
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

// replaceTags gives the version new tags (none: encoded is empty). Tags
// live in the version's record, which the rewrite replaces with one of
// the same bytes, ETag and Last-Modified.
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
	if _, tagged := info.Headers[tagsHeader]; encoded == "" && !tagged {
		w.WriteHeader(status)
		return nil
	}
	err = g.rewriteRecord(r.Context(), bucket, t, func(headers map[string]string) error {
		if encoded == "" {
			delete(headers, tagsHeader)
		} else {
			headers[tagsHeader] = encoded
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}

// rewriteRecord rewrites the version t with the same bytes and metadata
// and its stored headers as change leaves them: how tags and lock state
// change. change runs on the record the rewrite replaces (again, should a
// concurrent change to the version commit first), so two changes to one
// version never undo each other, and a check it makes holds for that
// record; an error from it stops the rewrite and is returned.
func (g *gateway) rewriteRecord(ctx context.Context, bucket string, t target, change func(headers map[string]string) error) error {
	edit := func(cur object.ObjectInfo) (object.PutOptions, error) {
		headers := maps.Clone(cur.Headers)
		if headers == nil {
			headers = map[string]string{}
		}
		if err := change(headers); err != nil {
			return object.PutOptions{}, err
		}
		return object.PutOptions{ContentType: cur.ContentType, UserMeta: cur.UserMeta, Headers: headers}, nil
	}
	if _, err := g.be.RewriteObject(ctx, bucket, t.stored, edit); err != nil {
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
