package gateway

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tessera/object"
)

// Browser POST uploads (HTML form, policy document signed with V4 or V2).
// They carry no Authorization header: authenticate hands them straight to
// postObject, which verifies the policy signature itself before anything
// else runs. Only bucket-level POSTs qualify.

// policyVerifier is the optional Authenticator method POST uploads need;
// *sigv4.Verifier implements it.
type policyVerifier interface {
	VerifyPolicy(fields map[string]string) (accessKey string, err error)
}

const (
	maxFormField  = 64 << 10
	maxFormFields = 1 << 20
)

// isPostForm reports whether r is a browser POST upload and returns the
// bucket it targets.
func (g *gateway) isPostForm(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "" || r.URL.RawQuery != "" {
		return "", false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
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
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

func (g *gateway) postObject(w http.ResponseWriter, r *http.Request, bucket string) error {
	pv, ok := g.auth.(policyVerifier)
	if !ok {
		return apiErrf(errNotImplemented, "POST uploads are not supported by this authenticator.")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return apiErrf(errMalformedPOSTRequest, "The body of your POST request is not well-formed multipart/form-data.")
	}
	fields, names := map[string]string{}, map[string]string{}
	total := 0
	for {
		part, err := mr.NextPart()
		if err != nil {
			return apiErrf(errMalformedPOSTRequest, "The POST form has no file field.")
		}
		name := part.FormName()
		if strings.EqualFold(name, "file") {
			return g.postFile(w, r, bucket, pv, fields, names, part.FileName(), part)
		}
		v, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
		total += len(v)
		if err != nil || len(v) > maxFormField || total > maxFormFields {
			return apiErr(errMaxMessageLengthExceeded)
		}
		fields[strings.ToLower(name)], names[strings.ToLower(name)] = string(v), name
	}
}

func (g *gateway) postFile(w http.ResponseWriter, r *http.Request, bucket string, pv policyVerifier,
	fields, names map[string]string, filename string, file io.Reader) error {
	if _, err := pv.VerifyPolicy(fields); err != nil {
		return err
	}
	key := strings.ReplaceAll(fields["key"], "${filename}", filename)
	if err := checkKey(key); err != nil {
		return err
	}
	pol, err := parsePolicy(fields["policy"], time.Now())
	if err != nil {
		return err
	}
	if err := pol.check(fields, bucket, key); err != nil {
		return err
	}
	opts, err := postPutOptions(fields, names)
	if err != nil {
		return err
	}
	body, err := newFormChecksum(&rangeReader{r: file, min: pol.minSize, max: pol.maxSize}, fields)
	if err != nil {
		return err
	}
	info, err := g.be.PutObject(r.Context(), bucket, key, body, -1, opts)
	if err != nil {
		return err
	}
	loc := objectLocation(r, bucket, key)
	w.Header().Set("ETag", quoteETag(info.ETag))
	setObjectChecksum(w.Header(), info.Checksum)
	w.Header().Set("Location", loc)
	switch fields["success_action_status"] {
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
// stand in for the headers of a PUT.
func postPutOptions(fields, names map[string]string) (object.PutOptions, error) {
	h := http.Header{}
	for lk, v := range fields {
		if lk == "content-type" || strings.HasPrefix(lk, metaPrefix) || lk == "x-amz-storage-class" ||
			lk == "cache-control" || lk == "content-disposition" || lk == "content-encoding" || lk == "expires" ||
			lk == "content-language" || lk == "tagging" {
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

// postPolicy is a decoded, unexpired policy document.
type postPolicy struct {
	conds            []policyCond
	minSize, maxSize int64
}

type policyCond struct {
	op, field, value string
}

func parsePolicy(b64 string, now time.Time) (postPolicy, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return postPolicy{}, apiErrf(errInvalidPolicyDocument, "The policy is not valid base64.")
	}
	var doc struct {
		Expiration string `json:"expiration"`
		Conditions []any  `json:"conditions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return postPolicy{}, apiErrf(errInvalidPolicyDocument, "The policy is not valid JSON.")
	}
	exp, err := time.Parse(time.RFC3339, doc.Expiration)
	if err != nil {
		return postPolicy{}, apiErrf(errInvalidPolicyDocument, "Invalid Policy: Invalid 'expiration' value.")
	}
	if now.After(exp) {
		return postPolicy{}, apiErrf(errAccessDenied, "Invalid according to Policy: Policy expired.")
	}
	p := postPolicy{minSize: 0, maxSize: object.MaxPutSize}
	for _, c := range doc.Conditions {
		if err := p.add(c); err != nil {
			return postPolicy{}, err
		}
	}
	return p, nil
}

func (p *postPolicy) add(c any) error {
	bad := apiErrf(errInvalidPolicyDocument, "Invalid Policy: Invalid condition %v.", c)
	switch c := c.(type) {
	case map[string]any:
		for k, v := range c {
			s, ok := v.(string)
			if !ok {
				return bad
			}
			p.conds = append(p.conds, policyCond{op: "eq", field: strings.ToLower(strings.TrimPrefix(k, "$")), value: s})
		}
		return nil
	case []any:
		if len(c) != 3 {
			return bad
		}
		op, _ := c[0].(string)
		op = strings.ToLower(op)
		if op == "content-length-range" {
			lo, ok1 := c[1].(float64)
			hi, ok2 := c[2].(float64)
			if !ok1 || !ok2 || lo < 0 || hi < lo {
				return bad
			}
			p.minSize, p.maxSize = int64(lo), int64(hi)
			return nil
		}
		field, ok1 := c[1].(string)
		value, ok2 := c[2].(string)
		if (op != "eq" && op != "starts-with") || !ok1 || !ok2 || !strings.HasPrefix(field, "$") {
			return bad
		}
		p.conds = append(p.conds, policyCond{op: op, field: strings.ToLower(field[1:]), value: value})
		return nil
	}
	return bad
}

// exemptFields need no policy condition.
func exemptField(name string) bool {
	switch name {
	case "policy", "x-amz-signature", "signature", "awsaccesskeyid", "file":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}

// check matches the form against every condition and requires every
// field to be covered by one, as S3 does.
func (p postPolicy) check(fields map[string]string, bucket, key string) error {
	covered := map[string]bool{}
	for _, c := range p.conds {
		covered[c.field] = true
		var got string
		switch c.field {
		case "bucket":
			got = bucket
		case "key":
			got = key
		default:
			got = fields[c.field]
		}
		ok := got == c.value
		if c.op == "starts-with" {
			ok = strings.HasPrefix(got, c.value)
		}
		if !ok {
			return apiErrf(errAccessDenied, "Invalid according to Policy: Policy Condition failed: [%q, \"$%s\", %q]", c.op, c.field, c.value)
		}
	}
	for name := range fields {
		if !exemptField(name) && !covered[name] {
			return apiErrf(errAccessDenied, "Invalid according to Policy: Extra input fields: %s", name)
		}
	}
	return nil
}

// rangeReader enforces content-length-range while the file streams: too
// many bytes fail at once, too few at the end, before the layer commits.
type rangeReader struct {
	r        io.Reader
	n        int64
	min, max int64
}

var errPostTooSmall = errors.New("POST file smaller than the policy allows")

func (b *rangeReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return n, apiErrf(errEntityTooLarge, "Your proposed upload exceeds the maximum allowed size (%d bytes).", b.max)
	}
	if err == io.EOF && b.n < b.min {
		return n, fmt.Errorf("%w: %s", apiErrf(errEntityTooSmall, "Your proposed upload is smaller than the minimum allowed size (%s bytes).",
			strconv.FormatInt(b.min, 10)), errPostTooSmall)
	}
	return n, err
}
