package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
)

type s3Error struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// rawClient sends hand-built requests, signed or not, so tests can send
// what no well-behaved SDK would.
type rawClient struct {
	t      *testing.T
	base   string
	ak, sk string
	hc     *http.Client
}

func newRaw(t *testing.T, c *cluster) *rawClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cr := c.srv.Credentials()
	return &rawClient{t: t, base: "http://" + c.srv.S3Addr(), ak: cr.AccessKey, sk: cr.SecretKey, hc: &http.Client{Transport: tr}}
}

type rawReq struct {
	method, path string // path is already URL-escaped
	body         []byte
	headers      map[string]string
	ak, sk       string // override credentials
	anonymous    bool
	clockSkew    time.Duration       // the client's clock is this far off when it signs
	chunked      bool                // no Content-Length: Transfer-Encoding: chunked
	tamper       func(*http.Request) // after signing
}

func (rc *rawClient) do(r rawReq) (int, []byte, http.Header) {
	rc.t.Helper()
	req, err := http.NewRequest(r.method, rc.base+r.path, bytes.NewReader(r.body))
	if err != nil {
		rc.t.Fatal(err)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	if r.chunked {
		req.ContentLength = -1
		req.Body = io.NopCloser(struct{ io.Reader }{bytes.NewReader(r.body)})
		req.GetBody = nil
	}
	if !r.anonymous {
		ak, sk := rc.ak, rc.sk
		if r.ak != "" {
			ak, sk = r.ak, r.sk
		}
		sum := sha256.Sum256(r.body)
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk}, req, hash, "s3", "us-east-1", time.Now().Add(r.clockSkew))
		if err != nil {
			rc.t.Fatal(err)
		}
	}
	if r.tamper != nil {
		r.tamper(req)
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		rc.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

func (rc *rawClient) expectError(name string, r rawReq, status int, code string) {
	rc.t.Helper()
	got, body, hdr := rc.do(r)
	var e s3Error
	if r.method != http.MethodHead {
		if err := xml.Unmarshal(body, &e); err != nil {
			rc.t.Errorf("%s: status %d, body not S3 XML: %q", name, got, body)
			return
		}
	}
	if got != status || (r.method != http.MethodHead && e.Code != code) {
		rc.t.Errorf("%s: got %d %s (%s), want %d %s", name, got, e.Code, e.Message, status, code)
	}
	if hdr.Get("X-Amz-Request-Id") == "" {
		rc.t.Errorf("%s: no x-amz-request-id", name)
	}
}

// snapshot is what a bad request must leave unchanged.
func snapshot(t *testing.T, c *cluster) string {
	t.Helper()
	ctx := context.Background()
	var sb strings.Builder
	buckets, err := c.mc.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		fmt.Fprintf(&sb, "bucket %s\n", b.Name)
		for o := range c.mc.ListObjects(ctx, b.Name, minio.ListObjectsOptions{Recursive: true}) {
			fmt.Fprintf(&sb, "  %q %d %s %v\n", o.Key, o.Size, o.ETag, o.Err)
		}
	}
	return sb.String()
}

func TestBadRequests(t *testing.T) {
	c := startServer(t)
	rc := newRaw(t, c)
	mustMakeBucket(t, c, "good")
	mustPut(t, c, "good", "obj", payload(1, 1000), minio.PutObjectOptions{})
	id, err := c.core.NewMultipartUpload(context.Background(), "good", "mp", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, c)

	put := func(path string) rawReq { return rawReq{method: "PUT", path: path, body: []byte("evil")} }
	cases := []struct {
		name   string
		req    rawReq
		status int
		code   string
	}{
		{"anonymous get", rawReq{method: "GET", path: "/good/obj", anonymous: true}, 403, "AccessDenied"},
		{"anonymous put", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), anonymous: true}, 403, "AccessDenied"},
		{"anonymous list buckets", rawReq{method: "GET", path: "/", anonymous: true}, 403, "AccessDenied"},
		{"unknown key", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), ak: "NOSUCHKEY0000", sk: "whatever"}, 403, "InvalidAccessKeyId"},
		{"wrong secret", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), ak: rc.ak, sk: "wrong-secret"}, 403, "SignatureDoesNotMatch"},
		{"tampered path", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), tamper: func(r *http.Request) { r.URL.Path = "/good/other" }}, 403, "SignatureDoesNotMatch"},
		{"tampered body", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), tamper: func(r *http.Request) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("y")), 1
		}}, 400, "XAmzContentSHA256Mismatch"},
		// A client whose clock is an hour slow signs consistently, the
		// credential scope's date included (rewriting X-Amz-Date alone
		// would be a malformed request in the hour after midnight UTC).
		{"skewed clock", rawReq{method: "GET", path: "/good/obj", clockSkew: -time.Hour}, 403, "RequestTimeTooSkewed"},
		{"bucket too short", put("/ab"), 400, "InvalidBucketName"},
		{"bucket upper case", put("/Upper"), 400, "InvalidBucketName"},
		{"bucket leading dash", put("/-abc"), 400, "InvalidBucketName"},
		{"bucket double dot", put("/a..b"), 400, "InvalidBucketName"},
		{"bucket ip", put("/192.168.1.1"), 400, "InvalidBucketName"},
		{"bucket too long", put("/" + strings.Repeat("a", 64)), 400, "InvalidBucketName"},
		{"bucket underscore", put("/bad_name"), 400, "InvalidBucketName"},
		{"key too long", put("/good/" + strings.Repeat("k", 1025)), 400, "KeyTooLongError"},
		{"missing bucket get", rawReq{method: "GET", path: "/nobucket/obj"}, 404, "NoSuchBucket"},
		{"missing key", rawReq{method: "GET", path: "/good/none"}, 404, "NoSuchKey"},
		{"unsatisfiable range", rawReq{method: "GET", path: "/good/obj", headers: map[string]string{"Range": "bytes=1000-"}}, 416, "InvalidRange"},
		{"malformed create bucket xml", rawReq{method: "PUT", path: "/newbucket", body: []byte("<CreateBucketConfiguration><Loc")}, 400, "MalformedXML"},
		{"malformed complete xml", rawReq{method: "POST", path: "/good/mp?uploadId=" + id, body: []byte("<CompleteMultipartUpload><Part>")}, 400, "MalformedXML"},
		{"malformed delete xml", rawReq{method: "POST", path: "/good?delete", body: []byte("not xml at all")}, 400, "MalformedXML"},
		{"unknown upload", rawReq{method: "PUT", path: "/good/mp?partNumber=1&uploadId=nosuchupload", body: []byte("x")}, 404, "NoSuchUpload"},
		{"bad part number", rawReq{method: "PUT", path: "/good/mp?partNumber=10001&uploadId=" + id, body: []byte("x")}, 400, "InvalidArgument"},
		{"empty complete", rawReq{method: "POST", path: "/good/mp?uploadId=" + id, body: []byte("<CompleteMultipartUpload></CompleteMultipartUpload>")}, 400, "MalformedXML"},
		{"bad content-md5", rawReq{method: "PUT", path: "/good/obj", body: []byte("x"), headers: map[string]string{"Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="}}, 400, "BadDigest"},
		{"delete non-empty bucket", rawReq{method: "DELETE", path: "/good"}, 409, "BucketNotEmpty"},
		{"unimplemented", rawReq{method: "PUT", path: "/good?policy", body: []byte("{}")}, 501, "NotImplemented"},
	}
	for _, tc := range cases {
		rc.expectError(tc.name, tc.req, tc.status, tc.code)
	}
	if after := snapshot(t, c); after != before {
		t.Fatalf("bad requests changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestKeyEdgeCases stores keys that stress path handling and reads them back.
func TestKeyEdgeCases(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "keys")
	keys := []string{
		"a/../b", "./dot", "trailing/", "a//double", "ünïcødé/日本語/🙂",
		"spaces and +plus", "percent%2Fencoded", "q?mark#hash", strings.Repeat("k", 1024),
		strings.Repeat("é", 512), // 1024 bytes of two-byte runes
	}
	for i, k := range keys {
		data := payload(int64(i), 100+i)
		mustPut(t, c, "keys", k, data, minio.PutObjectOptions{})
		if got := mustGet(t, c, "keys", k, minio.GetObjectOptions{}); !bytes.Equal(got, data) {
			t.Errorf("key %q: bytes differ", k)
		}
	}
	n := 0
	for o := range c.mc.ListObjects(context.Background(), "keys", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		n++
	}
	if n != len(keys) {
		t.Fatalf("listed %d keys, want %d", n, len(keys))
	}
	// S3 refuses keys whose dot segments leave nothing of them or climb
	// above the bucket, with a bare 400; nothing is stored.
	for _, k := range []string{"..", "../escape", ".", "//", "a/..", "for/../../bar/"} {
		_, err := c.mc.PutObject(context.Background(), "keys", k, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		if minio.ToErrorResponse(err).StatusCode != 400 {
			t.Errorf("PUT key %q: %v, want a 400", k, err)
		}
	}
	n = 0
	for o := range c.mc.ListObjects(context.Background(), "keys", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err == nil {
			n++
		}
	}
	if n != len(keys) {
		t.Errorf("after the refused keys, %d keys listed, want %d", n, len(keys))
	}
}
