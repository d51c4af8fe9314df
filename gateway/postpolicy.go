package gateway

import (
	"encoding/xml"
	"io"
	"mime"
	mpart "mime/multipart"
	"net/http"
	"strings"
	"time"

	"tessera/object"
)

// Browser POST uploads (HTML form, policy document signed with V4 or V2).
// They carry no Authorization header: authenticate hands every
// unauthenticated POST on a bucket to postObject, which verifies the
// policy signature itself before anything else runs.
//
// A refused upload is answered only once the rest of its body has been
// read (up to maxPostDrain): browsers and HTTP clients still sending the
// file would otherwise see the connection reset instead of S3's error.

// policyVerifier is the optional Authenticator method POST uploads need;
// *sigv4.Verifier implements it.
type policyVerifier interface {
	VerifyPolicy(fields map[string]string) (accessKey string, err error)
}

const (
	maxFormField  = 64 << 10
	maxFormFields = 1 << 20
	// maxPostDrain bounds what is read of a refused upload's body before
	// answering; past it the connection is closed after the answer.
	maxPostDrain = 64 << 20
)

// isPostForm reports whether r is a browser POST upload and returns the
// bucket it targets: S3 answers an unsigned POST on a bucket that names
// no sub-resource as a form upload, and one with another Content-Type
// with 412. Without any Content-Type it is left to the router.
func (g *gateway) isPostForm(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "" || r.URL.RawQuery != "" ||
		r.Header.Get("Content-Type") == "" {
		return "", false
	}
	if b := bucketFromHost(r.Host, g.domains); b != "" {
		return b, r.URL.Path == "/" || r.URL.Path == ""
	}
	b := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if b == "" || strings.Contains(b, "/") || !validBucketName(b) {
		return "", false
	}
	return b, true
}

type postResponse struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

func (g *gateway) postObject(w http.ResponseWriter, r *http.Request, bucket string) error {
	body := &postBody{r: r.Body}
	r.Body = body
	err := g.postForm(w, r, bucket)
	if err != nil {
		drainPost(w, r, body)
	}
	return err
}

func (g *gateway) postForm(w http.ResponseWriter, r *http.Request, bucket string) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return withFields(apiErr(errPreconditionFailed),
			errorField{"Condition", "Bucket POST must be of the enclosure-type multipart/form-data"})
	}
	if err != nil || params["boundary"] == "" {
		return apiErr(errMalformedPOSTRequest)
	}
	form, err := readForm(mpart.NewReader(r.Body, params["boundary"]))
	if err != nil {
		return err
	}
	return g.postFile(w, r, bucket, form)
}

// postForm is a form read up to its file field: the fields before it,
// by lowercase name, with the names as sent.
type form struct {
	fields, names map[string]string
	filename      string
	file          *mpart.Part
}

func readForm(mr *mpart.Reader) (form, error) {
	f := form{fields: map[string]string{}, names: map[string]string{}}
	total := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return f, withFields(apiErrf(errInvalidArgument, "POST requires exactly one file upload per request."),
				errorField{"ArgumentName", "file"}, errorField{"ArgumentValue", "0"})
		}
		if err != nil {
			return f, apiErr(errMalformedPOSTRequest)
		}
		name := part.FormName()
		if name == "" {
			// A part without a field name is no form field at all.
			return f, apiErr(errMalformedPOSTRequest)
		}
		if strings.EqualFold(name, "file") {
			f.filename, f.file = part.FileName(), part
			return f, nil
		}
		v, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
		total += len(v)
		if err != nil {
			return f, apiErr(errMalformedPOSTRequest)
		}
		if len(v) > maxFormField || total > maxFormFields {
			return f, apiErr(errMaxMessageLengthExceeded)
		}
		f.fields[strings.ToLower(name)], f.names[strings.ToLower(name)] = string(v), name
	}
}

func (g *gateway) postFile(w http.ResponseWriter, r *http.Request, bucket string, f form) error {
	key, err := postKey(f)
	if err != nil {
		return err
	}
	pv, ok := g.auth.(policyVerifier)
	if !ok {
		return apiErrf(errNotImplemented, "POST uploads are not supported by this authenticator.")
	}
	if _, err := pv.VerifyPolicy(f.fields); err != nil {
		return postAuthErr(err)
	}
	pol, err := parsePolicy(f.fields["policy"], time.Now())
	if err != nil {
		return err
	}
	if err := pol.check(f.fields, bucket, key); err != nil {
		return err
	}
	opts, err := postPutOptions(f.fields, f.names)
	if err != nil {
		return err
	}
	if err := refuseFormChecksums(f.fields); err != nil {
		return err
	}
	file := &rangeReader{r: f.file, min: pol.minSize, max: pol.maxSize}
	body, err := newFormChecksum(file, f.fields)
	if err != nil {
		return err
	}
	stored, vid, err := g.newVersion(r.Context(), bucket, key)
	if err != nil {
		return err
	}
	// The form cannot name a lock (refusedField); the bucket's default
	// retention still applies.
	if err := g.lockOnWrite(r.Context(), bucket, http.Header{}, &opts); err != nil {
		return err
	}
	info, err := g.be.PutObject(r.Context(), bucket, stored, body, -1, opts)
	if err != nil {
		return file.explain(err)
	}
	setWrittenVersion(w.Header(), vid)
	return writePostResult(w, r, bucket, key, info, f.fields["success_action_status"])
}

// postKey is the form's key, ${filename} replaced by the file's name.
func postKey(f form) (string, error) {
	key := f.fields["key"]
	if key == "" {
		return "", withFields(apiErrf(errInvalidArgument, "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields."),
			errorField{"ArgumentName", "key"}, errorField{"ArgumentValue", ""})
	}
	key = strings.ReplaceAll(key, "${filename}", f.filename)
	if dotSegmentKey(key) {
		// The same rule as for a PUT's key in the request path.
		return "", apiErr(errBadRequest400)
	}
	return key, checkKey(key)
}

func writePostResult(w http.ResponseWriter, r *http.Request, bucket, key string, info object.ObjectInfo, status string) error {
	loc := objectLocation(r, bucket, key)
	w.Header().Set("ETag", quoteETag(info.ETag))
	setObjectChecksum(w.Header(), info.Checksum)
	w.Header().Set("Location", loc)
	switch status {
	case "200":
		w.WriteHeader(http.StatusOK)
		return nil
	case "201":
		return writeXML(w, http.StatusCreated, postResponse{Location: loc, Bucket: bucket, Key: key, ETag: quoteETag(info.ETag)})
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// postPutOptions takes the stored metadata from the form fields, which
// stand in for the headers of a PUT; a field naming a feature a PUT
// refuses is refused alike.
func postPutOptions(fields, names map[string]string) (object.PutOptions, error) {
	h := http.Header{}
	for lk, v := range fields {
		if lk == "content-type" || strings.HasPrefix(lk, metaPrefix) || lk == "x-amz-storage-class" ||
			lk == "cache-control" || lk == "content-disposition" || lk == "content-encoding" || lk == "expires" ||
			lk == "content-language" || lk == "tagging" || lk == "x-amz-website-redirect-location" || refusedField(lk) {
			h.Set(names[lk], v)
		}
	}
	if t := fields["tagging"]; t != "" {
		// The form carries tags as a Tagging XML document.
		var doc tagging
		if err := xml.Unmarshal([]byte(t), &doc); err != nil {
			return object.PutOptions{}, apiErr(errMalformedXML)
		}
		if err := validateTags(doc.TagSet.Tags); err != nil {
			return object.PutOptions{}, err
		}
		h.Del("Tagging")
		h.Set("X-Amz-Tagging", encodeTags(doc.TagSet.Tags))
	}
	return parsePutOptions(h)
}

func refusedField(name string) bool {
	for _, h := range append(refusedHeaders[:len(refusedHeaders):len(refusedHeaders)], lockHeaders...) {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// postBody is a form upload's body; it notes whether reading started.
type postBody struct {
	r       io.ReadCloser
	started bool
}

func (b *postBody) Read(p []byte) (int, error) {
	b.started = true
	return b.r.Read(p)
}

func (b *postBody) Close() error { return b.r.Close() }

// drainPost reads what is left of a refused upload's body, so that the
// client, which may still be sending it, reads the answer instead of a
// reset connection. A client waiting on Expect: 100-continue has sent
// nothing yet and need not send it. Past maxPostDrain the connection is
// closed after the answer.
func drainPost(w http.ResponseWriter, r *http.Request, body *postBody) {
	if !body.started && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	n, _ := io.CopyN(io.Discard, body, maxPostDrain+1)
	if n > maxPostDrain {
		w.Header().Set("Connection", "close")
	}
}
