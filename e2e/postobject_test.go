package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// Browser POST uploads against a real server, as raw multipart forms: each
// way S3 refuses a form, with its status, code, message and elements, and
// nothing stored; the forms it accepts; and a refused form whose client
// sends its whole body before reading the answer.

// postForm is a signed form: the fields a presigning server hands out
// (each also an exact-match condition of the policy unless left out of
// it), then extra fields, then the file.
type postForm struct {
	ak, secret, region string
	key                string
	date               time.Time
	expiration         time.Time
	conds              []any
	extra              [][2]string
	drop               []string // generated fields left out of the form
	dropCond           []string // generated fields left out of the policy
	policy             *string  // the policy field as sent
	signature          *string  // the x-amz-signature field as sent
	file               []byte
	noFile             bool
}

func (f postForm) body(t testing.TB, bucket string) ([]byte, string) {
	t.Helper()
	if f.date.IsZero() {
		f.date = time.Now().UTC()
	}
	if f.expiration.IsZero() {
		f.expiration = time.Now().Add(time.Hour)
	}
	day := f.date.Format("20060102")
	gen := [][2]string{
		{"bucket", bucket}, {"key", f.key}, {"x-amz-algorithm", "AWS4-HMAC-SHA256"},
		{"x-amz-credential", f.ak + "/" + day + "/" + f.region + "/s3/aws4_request"},
		{"x-amz-date", f.date.Format("20060102T150405Z")},
	}
	conds := append([]any(nil), f.conds...)
	for _, g := range gen {
		if !inList(f.dropCond, g[0]) {
			conds = append(conds, map[string]string{g[0]: g[1]})
		}
	}
	doc, err := json.Marshal(map[string]any{"expiration": f.expiration.UTC().Format(time.RFC3339), "conditions": conds})
	if err != nil {
		t.Fatal(err)
	}
	policy := base64.StdEncoding.EncodeToString(doc)
	if f.policy != nil {
		policy = *f.policy
	}
	sig := postSignature(f.secret, day, f.region, policy)
	if f.signature != nil {
		sig = *f.signature
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, g := range append(gen, [2]string{"policy", policy}, [2]string{"x-amz-signature", sig}) {
		if !inList(f.drop, g[0]) {
			_ = mw.WriteField(g[0], g[1])
		}
	}
	for _, e := range f.extra {
		_ = mw.WriteField(e[0], e[1])
	}
	if !f.noFile {
		fw, _ := mw.CreateFormFile("file", "upload.bin")
		_, _ = fw.Write(f.file)
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func inList(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func postSignature(secret, day, region, policy string) string {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+secret), day), region), "s3"), "aws4_request")
	return hex.EncodeToString(mac(k, policy))
}

func b64Policy(doc string) *string {
	s := base64.StdEncoding.EncodeToString([]byte(doc))
	return &s
}

func strPtr(s string) *string { return &s }

// s3ErrorElems is every child element of an S3 error body, by name.
func s3ErrorElems(t testing.TB, body []byte) map[string]string {
	t.Helper()
	var doc struct {
		XMLName xml.Name `xml:"Error"`
		Elems   []struct {
			XMLName xml.Name
			Text    string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("error body does not parse: %v\n%s", err, body)
	}
	out := map[string]string{}
	for _, e := range doc.Elems {
		out[e.XMLName.Local] = e.Text
	}
	return out
}

func TestPostObjectForms(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	if err := c.mc.MakeBucket(ctx, "forms", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	cr := c.srv.Credentials()
	base := postForm{ak: cr.AccessKey, secret: cr.SecretKey, region: "us-east-1", key: "obj", file: []byte("data")}
	endpoint := "http://" + c.srv.S3Addr() + "/forms"
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	post := func(t *testing.T, body []byte, ct string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
		return resp, out
	}
	today := time.Now().UTC().Format("20060102")
	for _, tc := range []struct {
		name   string
		edit   func(f *postForm)
		ct     string // the request's Content-Type instead of the form's
		status int
		code   string
		msg    string
		elems  map[string]string
	}{
		{"not a form", nil, "application/json", 412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.",
			map[string]string{"Condition": "Bucket POST must be of the enclosure-type multipart/form-data"}},
		{"no boundary", nil, "multipart/form-data", 400, "MalformedPOSTRequest",
			"The body of your POST request is not well-formed multipart/form-data.", nil},
		{"no file", func(f *postForm) { f.noFile = true }, "", 400, "InvalidArgument", "POST requires exactly one file upload per request.",
			map[string]string{"ArgumentName": "file", "ArgumentValue": "0"}},
		{"anonymous", func(f *postForm) {
			f.drop = []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}
		},
			"", 403, "AccessDenied", "Access Denied.", nil},
		{"no signature field", func(f *postForm) { f.drop = []string{"x-amz-signature"} }, "", 400, "InvalidArgument",
			"Bucket POST must contain a field named 'x-amz-signature'.  If it is specified, please check the order of the fields.",
			map[string]string{"ArgumentName": "x-amz-signature", "ArgumentValue": ""}},
		{"bad algorithm", func(f *postForm) {
			f.drop, f.extra = []string{"x-amz-algorithm"}, [][2]string{{"x-amz-algorithm", "invalid"}}
		}, "", 400, "InvalidArgument", "Only AWS4-HMAC-SHA256 is supported",
			map[string]string{"ArgumentName": "X-Amz-Algorithm", "ArgumentValue": "invalid"}},
		{"bad date", func(f *postForm) {
			f.drop, f.extra = []string{"x-amz-date"}, [][2]string{{"x-amz-date", "invalid_date"}}
		},
			"", 400, "InvalidArgument", "X-Amz-Date must be formated via ISO8601 Long format",
			map[string]string{"ArgumentName": "X-Amz-Date", "ArgumentValue": "invalid_date"}},
		{"date over an hour old", func(f *postForm) { f.date = time.Now().UTC().Add(-61 * time.Minute) }, "", 403, "AccessDenied",
			"Invalid according to Policy: Policy expired.", nil},
		{"bad credential", func(f *postForm) {
			f.drop, f.extra = []string{"x-amz-credential"}, [][2]string{{"x-amz-credential", "malformed-no-slashes"}}
		}, "", 400, "InvalidArgument", `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
			map[string]string{"ArgumentName": "x-amz-credential", "ArgumentValue": "malformed-no-slashes"}},
		{"wrong region", func(f *postForm) { f.region = "us-west-2" }, "", 400, "InvalidArgument",
			`the region "us-west-2" is wrong; expecting "us-east-1"`,
			map[string]string{"ArgumentName": "x-amz-credential", "ArgumentValue": cr.AccessKey + "/" + today + "/us-west-2/s3/aws4_request"}},
		{"unknown key", func(f *postForm) { f.ak = "no_such_key" }, "", 403, "InvalidAccessKeyId",
			"The AWS Access Key Id you provided does not exist in our records.", map[string]string{"AWSAccessKeyId": "no_such_key"}},
		{"signature mismatch", func(f *postForm) { f.policy, f.signature = strPtr("e30="), strPtr("incorrect_signature") }, "", 403,
			"SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
			map[string]string{"AWSAccessKeyId": cr.AccessKey, "StringToSign": "e30=", "SignatureProvided": "incorrect_signature",
				"StringToSignBytes": "65 33 30 3d"}},
		{"empty policy", func(f *postForm) { f.policy = strPtr("") }, "", 400, "InvalidPolicyDocument",
			"Invalid Policy: Expecting '{' but found End-of-Input", nil},
		{"policy not base64", func(f *postForm) { f.policy = strPtr("invalid_base64") }, "", 400, "InvalidPolicyDocument",
			"Invalid Policy: invalid Base64 encoding.", nil},
		{"policy with another member", func(f *postForm) {
			f.policy = b64Policy(`{"conditions": [], "expiration": "2020-01-01T00:00:00Z", "extra": "field"}`)
		}, "", 400, "InvalidPolicyDocument", `Invalid Policy: Unexpected: "extra"`, nil},
		{"unknown operation", func(f *postForm) { f.conds = []any{[]any{"invalid", "$content-type", "x"}} }, "", 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid Condition: unknown operation 'invalid'.", nil},
		{"expired policy", func(f *postForm) { f.expiration = time.Now().Add(-5 * time.Minute) }, "", 403, "AccessDenied",
			"Invalid according to Policy: Policy expired.", nil},
		{"list condition fails", func(f *postForm) {
			f.conds, f.extra = []any{[]any{"eq", "$key", "expected-key"}}, nil
			f.dropCond = []string{"key"}
		}, "", 403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["eq", "$key", "expected-key"]`, nil},
		{"object condition fails", func(f *postForm) {
			f.conds, f.extra = []any{map[string]string{"content-type": "application/xml"}}, [][2]string{{"content-type", "text/html"}}
		}, "", 403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["eq", "$content-type", "application/xml"]`, nil},
		{"one content type outside the prefix", func(f *postForm) {
			f.conds = []any{[]any{"starts-with", "$content-type", "text/"}}
			f.extra = [][2]string{{"content-type", "text/plain, image/jpeg"}}
		}, "", 403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["starts-with", "$content-type", "text/"]`, nil},
		{"field outside the policy", func(f *postForm) { f.extra = [][2]string{{"x-amz-meta-custom", "v"}} }, "", 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: x-amz-meta-custom", nil},
		{"file too large", func(f *postForm) { f.file, f.conds = []byte("0123456789"), []any{[]any{"content-length-range", 0, 5}} }, "", 400,
			"EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.",
			map[string]string{"ProposedSize": "10", "MaxSizeAllowed": "5"}},
		{"file too small", func(f *postForm) { f.file, f.conds = []byte("hi"), []any{[]any{"content-length-range", 100, 1024}} }, "", 400,
			"EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size",
			map[string]string{"ProposedSize": "2", "MinSizeAllowed": "100"}},
		{"unknown checksum algorithm", func(f *postForm) {
			f.conds, f.extra = []any{map[string]string{"x-amz-checksum-invalid": "x"}}, [][2]string{{"x-amz-checksum-invalid", "x"}}
		}, "", 400, "InvalidRequest", "The algorithm type you specified in x-amz-checksum- header is invalid.", nil},
		{"bad checksum value", func(f *postForm) {
			f.conds, f.extra = []any{map[string]string{"x-amz-checksum-sha256": "invalid"}}, [][2]string{{"x-amz-checksum-sha256", "invalid"}}
		}, "", 400, "InvalidRequest", "Value for x-amz-checksum-sha256 header is invalid.", nil},
		{"two checksums", func(f *postForm) {
			f.file = []byte("test data")
			f.conds = []any{map[string]string{"x-amz-checksum-crc32": "0wiusg=="}, map[string]string{"x-amz-checksum-crc32c": "M3m0yg=="}}
			f.extra = [][2]string{{"x-amz-checksum-crc32", "0wiusg=="}, {"x-amz-checksum-crc32c", "M3m0yg=="}}
		}, "", 400, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.", nil},
		{"website redirect, refused as on PUT", func(f *postForm) {
			f.conds = []any{map[string]string{"x-amz-website-redirect-location": "ftp://elsewhere"}}
			f.extra = [][2]string{{"x-amz-website-redirect-location", "ftp://elsewhere"}}
		}, "", 400, "InvalidRedirectLocation", "The website redirect location must have a prefix of 'http://' or 'https://' or '/'.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			f.key = "refused-" + strings.ReplaceAll(tc.name, " ", "-")
			if tc.edit != nil {
				tc.edit(&f)
			}
			body, ct := f.body(t, "forms")
			if tc.ct != "" {
				ct = tc.ct
			}
			resp, out := post(t, body, ct)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, out)
			}
			got := s3ErrorElems(t, out)
			if got["Code"] != tc.code || got["Message"] != tc.msg {
				t.Fatalf("%s %q, want %s %q", got["Code"], got["Message"], tc.code, tc.msg)
			}
			for k, v := range tc.elems {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("<%s> %q (present %v), want %q", k, g, ok, v)
				}
			}
			if _, err := c.mc.StatObject(ctx, "forms", f.key, minio.StatObjectOptions{}); err == nil {
				t.Fatalf("a refused form stored %s", f.key)
			}
		})
	}

	t.Run("201 answers a namespaced PostResponse", func(t *testing.T) {
		f := base
		f.key, f.file = "created", []byte("hello")
		f.conds = []any{[]any{"eq", "$success_action_status", "201"}}
		f.extra = [][2]string{{"success_action_status", "201"}}
		body, ct := f.body(t, "forms")
		resp, out := post(t, body, ct)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		var pr struct {
			XMLName                     xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PostResponse"`
			Location, Bucket, Key, ETag string
		}
		if err := xml.Unmarshal(out, &pr); err != nil {
			t.Fatalf("PostResponse: %v\n%s", err, out)
		}
		if pr.Bucket != "forms" || pr.Key != "created" || pr.ETag == "" || pr.Location != endpoint+"/created" ||
			resp.Header.Get("Location") != pr.Location {
			t.Fatalf("PostResponse %+v, Location %q", pr, resp.Header.Get("Location"))
		}
		checkPosted(t, c, "forms", "created", "hello")
	})
	t.Run("conditions S3 allows", func(t *testing.T) {
		f := base
		f.key = "allowed"
		f.conds = []any{[]any{"starts-with", "$content-type", "text/"}, []any{"starts-with", "$x-amz-meta-tag", ""},
			[]any{"content-length-range", 1, 100}, map[string]string{"x-amz-checksum-crc32": "0wiusg=="}}
		f.file = []byte("test data")
		f.extra = [][2]string{{"content-type", "text/plain, text/html"}, {"x-amz-meta-tag", "anything"},
			{"x-ignore-me", "v"}, {"x-amz-checksum-crc32", "0wiusg=="}}
		body, ct := f.body(t, "forms")
		if resp, out := post(t, body, ct); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		checkPosted(t, c, "forms", "allowed", "test data")
	})
}

func checkPosted(t *testing.T, c *cluster, bucket, key, want string) {
	t.Helper()
	obj, err := c.mc.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || string(got) != want {
		t.Fatalf("%s/%s holds %q (%v), want %q", bucket, key, got, err, want)
	}
}

// TestPostObjectRefusedBodyIsRead sends a refused form the way simple
// clients do, writing the whole request before reading the answer, and
// then a second request on the same connection: a server that answered
// early and dropped the rest would reset the connection under the client.
func TestPostObjectRefusedBodyIsRead(t *testing.T) {
	c := startServer(t)
	if err := c.mc.MakeBucket(context.Background(), "forms", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	cr := c.srv.Credentials()
	f := postForm{ak: cr.AccessKey, secret: cr.SecretKey, region: "us-east-1", key: "big",
		signature: strPtr("bad"), file: bytes.Repeat([]byte("x"), 8<<20)}
	body, ct := f.body(t, "forms")
	conn, err := net.Dial("tcp", c.srv.S3Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	for i := 0; i < 2; i++ {
		head := fmt.Sprintf("POST /forms HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", c.srv.S3Addr(), ct, len(body))
		if _, err := conn.Write(append([]byte(head), body...)); err != nil {
			t.Fatalf("request %d: writing the body: %v", i+1, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: reading the answer: %v", i+1, err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if resp.StatusCode != http.StatusForbidden || s3ErrorElems(t, out)["Code"] != "SignatureDoesNotMatch" {
			t.Fatalf("request %d: status %d: %s", i+1, resp.StatusCode, out)
		}
		if resp.Close {
			t.Fatalf("request %d: the server closes the connection", i+1)
		}
	}
}
