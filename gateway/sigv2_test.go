package gateway

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"
)

// v2Gateway serves the fake backend through the real verifier, with
// virtual-hosted requests under s3.test.
func v2Gateway(t *testing.T) (*fakeBackend, http.Handler) {
	t.Helper()
	be := newFakeBackend()
	be.minPartSize = 5
	v := testVerifier()
	v.Domains = []string{"s3.test"}
	h, err := New(Config{Backend: be, Auth: v, Domains: v.Domains, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return be, h
}

// v2Client sends requests signed by minio-go's Signature Version 2
// signer, an implementation independent of the verifier's.
type v2Client struct {
	t       *testing.T
	h       http.Handler
	bucket  string
	vhost   bool
	presign bool
}

// do sends method on key ("" for the bucket) with a raw query; headers
// are set before signing, tamper runs after.
func (c v2Client) do(method, key, query, body string, headers map[string]string, tamper func(*http.Request)) *httptest.ResponseRecorder {
	c.t.Helper()
	target, host := "/"+c.bucket+"/"+key, "s3.test"
	if key == "" {
		target = "/" + c.bucket
	}
	if c.vhost {
		target, host = "/"+key, c.bucket+".s3.test"
	}
	if query != "" {
		target += "?" + query
	}
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Host = host
	r.RequestURI = ""
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	if c.presign {
		r = signer.PreSignV2(*r, testAccessKey, testSecretKey, 60, c.vhost)
		r.Header.Del("Expires")
	} else {
		r = signer.SignV2(*r, testAccessKey, testSecretKey, c.vhost)
	}
	if tamper != nil {
		tamper(r)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	return rec
}

func (c v2Client) ok(method, key, query, body string, headers map[string]string) *httptest.ResponseRecorder {
	c.t.Helper()
	rec := c.do(method, key, query, body, headers, nil)
	if rec.Code/100 != 2 {
		c.t.Fatalf("%s %s?%s (vhost %v): %d %s", method, key, query, c.vhost, rec.Code, rec.Body.String())
	}
	return rec
}

func md5Base64(s string) string {
	sum := md5.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// TestSignatureV2EveryPath runs bucket, object, sub-resource, copy and
// multipart operations signed with Signature Version 2, in path and
// virtual-hosted style.
func TestSignatureV2EveryPath(t *testing.T) {
	for _, vhost := range []bool{false, true} {
		t.Run(fmt.Sprintf("vhost=%v", vhost), func(t *testing.T) {
			be, h := v2Gateway(t)
			c := v2Client{t: t, h: h, bucket: "bkt", vhost: vhost}
			c.ok("PUT", "", "", "", nil)
			c.ok("GET", "", "location", "", nil)
			c.ok("GET", "", "list-type=2&prefix=a", "", nil)
			c.ok("GET", "", "", "", nil)
			c.ok("PUT", "a%20b/k+1", "", "hello", map[string]string{
				"Content-Type": "text/plain", "Content-MD5": md5Base64("hello"),
				"X-Amz-Meta-A": "1", "X-Amz-Meta-A-B": "2", "X-Amz-Storage-Class": "STANDARD",
			})
			if _, _, found := be.object("bkt", "a b/k+1"); !found {
				t.Fatal("object stored under another key")
			}
			rec := c.ok("GET", "a%20b/k+1", "response-content-type=application%2Fx-test&response-cache-control=no-cache", "", nil)
			if rec.Header().Get("Content-Type") != "application/x-test" || rec.Body.String() != "hello" {
				t.Fatalf("GET with overrides: %q %q", rec.Header().Get("Content-Type"), rec.Body.String())
			}
			etag := c.ok("HEAD", "a%20b/k+1", "", "", nil).Header().Get("ETag")
			tags := `<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`
			c.ok("PUT", "a%20b/k+1", "tagging", tags, map[string]string{"Content-MD5": md5Base64(tags)})
			c.ok("GET", "a%20b/k+1", "tagging", "", nil)
			// x-amz-copy-source sorts before x-amz-copy-source-if-*.
			c.ok("PUT", "copy", "", "", map[string]string{
				"X-Amz-Copy-Source": "/bkt/a%20b/k%2B1", "X-Amz-Copy-Source-If-Match": etag,
				"X-Amz-Copy-Source-If-Unmodified-Since": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat),
				"X-Amz-Metadata-Directive":              "COPY",
			})
			multipart(t, c)
			// The fake backend does not list uploads; authentication passed.
			if rec := c.do("GET", "", "uploads", "", nil, nil); rec.Code != http.StatusNotImplemented {
				t.Fatalf("GET ?uploads: %d %s", rec.Code, rec.Body.String())
			}
			del := `<Delete><Object><Key>copy</Key></Object><Object><Key>mp</Key></Object></Delete>`
			c.ok("POST", "", "delete", del, map[string]string{"Content-MD5": md5Base64(del), "Content-Type": "application/xml"})
			c.ok("DELETE", "a%20b/k+1", "", "", nil)
			c.ok("DELETE", "", "", "", nil)
		})
	}
}

// multipart creates, fills, lists and completes an upload.
func multipart(t *testing.T, c v2Client) {
	t.Helper()
	var init initiateMultipartUploadResult
	if err := xml.Unmarshal(c.ok("POST", "mp", "uploads", "", map[string]string{"Content-Type": "text/plain"}).Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	id := "uploadId=" + init.UploadID
	e1 := c.ok("PUT", "mp", "partNumber=1&"+id, "part-one", nil).Header().Get("ETag")
	e2 := c.ok("PUT", "mp", id+"&partNumber=2", "part-two", nil).Header().Get("ETag")
	c.ok("GET", "mp", id, "", nil)
	done := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part>`+
		`<Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, e1, e2)
	c.ok("POST", "mp", id, done, nil)
	c.ok("GET", "mp", "partNumber=1", "", nil)
}

// TestSignatureV2Presigned follows minio-go's V2 presigned URLs, with
// sub-resources and response overrides, in both styles.
func TestSignatureV2Presigned(t *testing.T) {
	for _, vhost := range []bool{false, true} {
		_, h := v2Gateway(t)
		c := v2Client{t: t, h: h, bucket: "bkt", vhost: vhost}
		c.ok("PUT", "", "", "", nil)
		c.ok("PUT", "k", "", "data", nil)
		p := c
		p.presign = true
		if rec := p.ok("GET", "k", "response-content-disposition=attachment%3B%20filename%3D%22x%22", "", nil); rec.Body.String() != "data" ||
			rec.Header().Get("Content-Disposition") != `attachment; filename="x"` {
			t.Fatalf("presigned GET: %q %q", rec.Body.String(), rec.Header().Get("Content-Disposition"))
		}
		p.ok("PUT", "k2", "", "presigned", nil)
		p.ok("GET", "", "location", "", nil)
	}
}

// TestSignatureV2Rejects changes what the signature covers after signing.
func TestSignatureV2Rejects(t *testing.T) {
	be, h := v2Gateway(t)
	c := v2Client{t: t, h: h, bucket: "bkt"}
	c.ok("PUT", "", "", "", nil)
	c.ok("PUT", "k", "", "data", nil)
	before := be.mutations()
	cases := []struct {
		name                string
		method, key, query  string
		headers             map[string]string
		tamper              func(*http.Request)
		status              int
		code, message, elem string
	}{
		{"changed copy condition", "PUT", "c", "", map[string]string{"X-Amz-Copy-Source": "/bkt/k", "X-Amz-Copy-Source-If-Match": `"x"`},
			func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source-If-Match", `"y"`) }, 403, "SignatureDoesNotMatch", "", ""},
		{"added amz header", "PUT", "c", "", nil,
			func(r *http.Request) { r.Header.Set("X-Amz-Meta-Evil", "1") }, 403, "SignatureDoesNotMatch", "", ""},
		{"changed sub-resource", "DELETE", "k", "uploadId=abc", nil,
			func(r *http.Request) { r.URL.RawQuery = "uploadId=abd" }, 403, "SignatureDoesNotMatch", "", ""},
		{"added sub-resource", "PUT", "k", "", nil,
			func(r *http.Request) { r.URL.RawQuery = "acl" }, 403, "SignatureDoesNotMatch", "", ""},
		{"virtual host of another bucket", "PUT", "k", "", nil,
			func(r *http.Request) { r.Host = "other.s3.test"; r.URL.Path = "/bkt/k" }, 403, "SignatureDoesNotMatch", "", ""},
		{"no date", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Del("Date") }, 403, "AccessDenied",
			"AWS authentication requires a valid Date or x-amz-date header", ""},
		{"bad x-amz-date", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Set("X-Amz-Date", "Bad Date") }, 403, "AccessDenied",
			"AWS authentication requires a valid Date or x-amz-date header", ""},
		{"date before epoch", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Set("X-Amz-Date", "Tue, 07 Jul 1950 21:53:04 GMT") },
			403, "AccessDenied", "", ""},
		{"date in past", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Set("X-Amz-Date", "Tue, 07 Jul 2010 21:53:04 GMT") },
			403, "RequestTimeTooSkewed", "", ""},
		{"date after 9999", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Set("X-Amz-Date", "Tue, 07 Jul 9999 21:53:04 GMT") },
			403, "RequestTimeTooSkewed", "", ""},
		{"no colon", "PUT", "c", "", nil, func(r *http.Request) { r.Header.Set("Authorization", "AWS HAHAHA") }, 400, "InvalidArgument",
			"AWS authorization header is invalid.  Expected AwsAccessKeyId:signature", ""},
		{"unknown key", "PUT", "c", "", nil, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), testAccessKey, "AKIDOTHER", 1))
		}, 403, "InvalidAccessKeyId", "", ""},
		{"presigned expired", "GET", "k", "AWSAccessKeyId=" + testAccessKey + "&Expires=1000&Signature=abc", nil,
			func(r *http.Request) { r.Header.Del("Authorization") }, 403, "AccessDenied", "Request has expired", "<Expires>1970-01-01T00:16:40Z</Expires>"},
		{"presigned expires not a number", "GET", "k", "AWSAccessKeyId=" + testAccessKey + "&Expires=soon&Signature=abc", nil,
			func(r *http.Request) { r.Header.Del("Authorization") }, 403, "AccessDenied", "Invalid date (should be seconds since epoch): soon", ""},
		{"presigned without signature", "GET", "k", "AWSAccessKeyId=" + testAccessKey + "&Expires=9999999999", nil,
			func(r *http.Request) { r.Header.Del("Authorization") }, 403, "AccessDenied",
			"Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := c.do(tc.method, tc.key, tc.query, "", tc.headers, tc.tamper)
			checkAuthError(t, rec, tc.status, tc.code, tc.message, tc.elem)
		})
	}
	if be.mutations() != before {
		t.Error("a rejected request changed the backend")
	}
}

// checkAuthError checks status, code, and when given the message and a
// raw element of the error body.
func checkAuthError(t *testing.T, rec *httptest.ResponseRecorder, status int, code, message, elem string) {
	t.Helper()
	var e errorResponse
	if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", rec.Body.String(), err)
	}
	if rec.Code != status || e.Code != code || (message != "" && e.Message != message) ||
		(elem != "" && !strings.Contains(rec.Body.String(), elem)) {
		t.Fatalf("got %d %s, want %d %s %q %s", rec.Code, rec.Body.String(), status, code, message, elem)
	}
}
