package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	mpart "mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tessera/gateway/sigv4"
)

const (
	postAK     = "postkey"
	postSecret = "postsecret"
	postRegion = "us-east-1"
)

// postGateway is a gateway whose POST forms the real verifier checks.
func postGateway(t testing.TB) (*fakeBackend, http.Handler) {
	t.Helper()
	be, h := newTestGateway(t, &sigv4.Verifier{Region: postRegion, Lookup: func(ak string) (string, bool) {
		return postSecret, ak == postAK
	}})
	if err := be.MakeBucket(context.Background(), "bkt"); err != nil {
		t.Fatal(err)
	}
	return be, h
}

// formSpec describes a signed browser POST form, as a browser builds it
// from what a server presigned: the signature fields, key and bucket,
// each also a condition of the policy, then the file.
type formSpec struct {
	key          string
	date         time.Time // signing date; zero: now
	region       string
	access       string
	secret       string
	expiration   time.Time // zero: in an hour
	conds        []any     // conditions before the generated ones
	extra        [][2]string
	omit         []string // generated fields left out of the form
	omitCond     []string // generated fields left out of the policy
	rawPolicy    *string  // the policy field as sent, instead of one built
	signature    *string  // the x-amz-signature as sent
	file         []byte
	contentType  string // overrides the form's Content-Type header
	noFile       bool
	afterFileRaw string // bytes appended after the closing boundary
}

func (s formSpec) fields() [][2]string {
	if s.date.IsZero() {
		s.date = time.Now().UTC()
	}
	if s.region == "" {
		s.region = postRegion
	}
	if s.access == "" {
		s.access = postAK
	}
	key := s.key
	if key == "" {
		key = "obj"
	}
	return [][2]string{
		{"bucket", "bkt"},
		{"key", key},
		{"x-amz-algorithm", "AWS4-HMAC-SHA256"},
		{"x-amz-credential", s.access + "/" + s.date.Format("20060102") + "/" + s.region + "/s3/aws4_request"},
		{"x-amz-date", s.date.Format("20060102T150405Z")},
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// build returns the form's body and Content-Type.
func (s formSpec) build(t testing.TB) ([]byte, string) {
	t.Helper()
	gen := s.fields()
	policy := s.policy(t, gen)
	date, _ := time.Parse("20060102T150405Z", gen[4][1])
	secret := s.secret
	if secret == "" {
		secret = postSecret
	}
	region := s.region
	if region == "" {
		region = postRegion
	}
	sig := signPolicyV4(secret, date, region, policy)
	if s.signature != nil {
		sig = *s.signature
	}
	var buf bytes.Buffer
	mw := mpart.NewWriter(&buf)
	var all [][2]string
	for _, f := range append(gen, [2]string{"policy", policy}, [2]string{"x-amz-signature", sig}) {
		if !contains(s.omit, f[0]) {
			all = append(all, f)
		}
	}
	for _, f := range append(all, s.extra...) {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !s.noFile {
		fw, err := mw.CreateFormFile("file", "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(s.file)
	}
	_ = mw.Close()
	buf.WriteString(s.afterFileRaw)
	ct := mw.FormDataContentType()
	if s.contentType != "" {
		ct = s.contentType
	}
	return buf.Bytes(), ct
}

func (s formSpec) policy(t testing.TB, gen [][2]string) string {
	if s.rawPolicy != nil {
		return *s.rawPolicy
	}
	conds := append([]any(nil), s.conds...)
	for _, f := range gen {
		if !contains(s.omitCond, f[0]) {
			conds = append(conds, map[string]string{f[0]: f[1]})
		}
	}
	exp := s.expiration
	if exp.IsZero() {
		exp = time.Now().Add(time.Hour)
	}
	doc, err := json.Marshal(map[string]any{"expiration": exp.UTC().Format(time.RFC3339), "conditions": conds})
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(doc)
}

func signPolicyV4(secret string, date time.Time, region, policy string) string {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac([]byte("AWS4"+secret), date.Format("20060102"))
	k = mac(mac(mac(k, region), "s3"), "aws4_request")
	return hex.EncodeToString(mac(k, policy))
}

func postIt(t testing.TB, h http.Handler, s formSpec) *httptest.ResponseRecorder {
	t.Helper()
	body, ct := s.build(t)
	r := httptest.NewRequest(http.MethodPost, "/bkt", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// errorElems returns the text of each child element of an error body.
func errorElems(t testing.TB, body []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	dec := xml.NewDecoder(bytes.NewReader(body))
	depth, name := 0, ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("error body does not parse: %v\n%s", err, body)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 && tok.Name.Local != "Error" {
				t.Fatalf("root element %s\n%s", tok.Name.Local, body)
			}
			name = tok.Name.Local
			if depth == 2 {
				out[name] = ""
			}
		case xml.CharData:
			if depth == 2 {
				out[name] += string(tok)
			}
		case xml.EndElement:
			depth--
		}
	}
}

func ptr(s string) *string { return &s }
