package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func b64(s string) *string {
	v := base64.StdEncoding.EncodeToString([]byte(s))
	return &v
}

// postErrorCases are forms S3 refuses, with its status, code, message
// and the extra elements of its error body.
var postErrorCases = []struct {
	name   string
	spec   formSpec
	status int
	code   string
	msg    string
	elems  map[string]string
}{
	{"not a form", formSpec{contentType: "application/json"}, 412, "PreconditionFailed",
		"At least one of the pre-conditions you specified did not hold.",
		map[string]string{"Condition": "Bucket POST must be of the enclosure-type multipart/form-data"}},
	{"no boundary", formSpec{contentType: "multipart/form-data"}, 400, "MalformedPOSTRequest",
		"The body of your POST request is not well-formed multipart/form-data.", nil},
	{"no file", formSpec{noFile: true}, 400, "InvalidArgument",
		"POST requires exactly one file upload per request.", map[string]string{"ArgumentName": "file", "ArgumentValue": "0"}},
	{"no key", formSpec{omit: []string{"key"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "key", "ArgumentValue": ""}},
	{"anonymous", formSpec{omit: []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}},
		403, "AccessDenied", "Access Denied.", nil},
	{"no policy", formSpec{omit: []string{"policy"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'policy'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "policy", "ArgumentValue": ""}},
	{"no signature", formSpec{omit: []string{"x-amz-signature"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'x-amz-signature'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "x-amz-signature"}},
	{"no credential", formSpec{omit: []string{"x-amz-credential"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'x-amz-credential'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "x-amz-credential"}},
	{"no date", formSpec{omit: []string{"x-amz-date"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'x-amz-date'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "x-amz-date"}},
	{"no algorithm", formSpec{omit: []string{"x-amz-algorithm"}}, 400, "InvalidArgument",
		"Bucket POST must contain a field named 'x-amz-algorithm'.  If it is specified, please check the order of the fields.",
		map[string]string{"ArgumentName": "x-amz-algorithm"}},
	{"bad algorithm", formSpec{omit: []string{"x-amz-algorithm"}, extra: [][2]string{{"x-amz-algorithm", "invalid"}}, omitCond: []string{"x-amz-algorithm"}},
		400, "InvalidArgument", "Only AWS4-HMAC-SHA256 is supported",
		map[string]string{"ArgumentName": "X-Amz-Algorithm", "ArgumentValue": "invalid"}},
	{"bad date", formSpec{omit: []string{"x-amz-date"}, extra: [][2]string{{"x-amz-date", "invalid_date"}}},
		400, "InvalidArgument", "X-Amz-Date must be formated via ISO8601 Long format",
		map[string]string{"ArgumentName": "X-Amz-Date", "ArgumentValue": "invalid_date"}},
	{"stale date", formSpec{date: time.Now().UTC().Add(-61 * time.Minute)}, 403, "AccessDenied",
		"Invalid according to Policy: Policy expired.", nil},
	{"bad credential", formSpec{omit: []string{"x-amz-credential"}, extra: [][2]string{{"x-amz-credential", "malformed-no-slashes"}}},
		400, "InvalidArgument", `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
		map[string]string{"ArgumentName": "x-amz-credential", "ArgumentValue": "malformed-no-slashes"}},
	{"wrong region", formSpec{region: "us-west-2"}, 400, "InvalidArgument",
		`the region "us-west-2" is wrong; expecting "us-east-1"`,
		map[string]string{"ArgumentName": "x-amz-credential", "ArgumentValue": postAK + "/" + time.Now().UTC().Format("20060102") + "/us-west-2/s3/aws4_request"}},
	{"unknown key", formSpec{access: "nobody"}, 403, "InvalidAccessKeyId",
		"The AWS Access Key Id you provided does not exist in our records.", map[string]string{"AWSAccessKeyId": "nobody"}},
	{"bad signature", formSpec{rawPolicy: ptr("cG9saWN5"), signature: ptr("incorrect_signature")}, 403, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.",
		map[string]string{"AWSAccessKeyId": postAK, "StringToSign": "cG9saWN5", "SignatureProvided": "incorrect_signature",
			"StringToSignBytes": "63 47 39 73 61 57 4e 35"}},
	{"empty policy", formSpec{rawPolicy: ptr("")}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Expecting '{' but found End-of-Input", nil},
	{"policy not base64", formSpec{rawPolicy: ptr("invalid_base64")}, 400, "InvalidPolicyDocument",
		"Invalid Policy: invalid Base64 encoding.", nil},
	{"policy not JSON", formSpec{rawPolicy: b64("invalid json")}, 400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.", nil},
	{"no expiration", formSpec{rawPolicy: b64(`{"conditions": []}`)}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Policy missing expiration.", nil},
	{"expiration not a string", formSpec{rawPolicy: b64(`{"expiration": true, "conditions": []}`)}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid JSON.", nil},
	{"expiration not a date", formSpec{rawPolicy: b64(`{"expiration": "invalid", "conditions": []}`)}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid 'expiration' value: 'invalid'", nil},
	{"no conditions", formSpec{rawPolicy: b64(`{"expiration": "2144-11-08T04:19:33Z"}`)}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Policy missing conditions.", nil},
	{"conditions not a list", formSpec{rawPolicy: b64(`{"expiration": "2144-11-08T04:19:33Z", "conditions": true}`)}, 400,
		"InvalidPolicyDocument", "Invalid Policy: Invalid 'conditions' value: must be a List.", nil},
	{"condition not a list or object", formSpec{rawPolicy: b64(`{"expiration": "2144-11-08T04:19:33Z", "conditions": [true]}`)}, 400,
		"InvalidPolicyDocument", "Invalid Policy: Invalid condition test: must be a List or Object.", nil},
	{"unexpected member, before expiry", formSpec{rawPolicy: b64(`{"expiration": "2020-01-01T00:00:00Z", "conditions": [], "extra": "field"}`)},
		400, "InvalidPolicyDocument", `Invalid Policy: Unexpected: "extra"`, nil},
	{"expired", formSpec{expiration: time.Now().Add(-time.Minute)}, 403, "AccessDenied", "Invalid according to Policy: Policy expired.", nil},
	{"empty condition", formSpec{conds: []any{[]any{}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid Condition: missing operation identifier.", nil},
	{"unknown operation", formSpec{conds: []any{[]any{"invalid", "$content-type", "x"}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid Condition: unknown operation 'invalid'.", nil},
	{"four arguments", formSpec{conds: []any{[]any{"eq", "$content-type", "x", "y"}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid eq: wrong number of arguments.", nil},
	{"field not a string", formSpec{conds: []any{[]any{"eq", false, "x"}}}, 400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.", nil},
	{"value not a string", formSpec{conds: []any{[]any{"eq", "$content-type", true}}}, 400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.", nil},
	{"range not numbers", formSpec{conds: []any{[]any{"content-length-range", "invalid", "14"}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid JSON.", nil},
	{"simple condition of two", formSpec{conds: []any{map[string]any{"expires": "a", "cache": "b"}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.", nil},
	{"simple condition not a string", formSpec{conds: []any{map[string]any{"expires": true}}}, 400, "InvalidPolicyDocument",
		"Invalid Policy: Invalid Simple-Condition: value must be a string.", nil},
	{"no $ in field", formSpec{conds: []any{[]any{"eq", "content-type", "binary/octet-stream"}}}, 403, "AccessDenied",
		`Invalid according to Policy: Policy Condition failed: ["eq", "content-type", "binary/octet-stream"]`, nil},
	{"list condition quoted as written", formSpec{conds: []any{[]any{"eq", "$content-type", "text/plain"}}, extra: [][2]string{{"content-type", "image/jpeg"}}},
		403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["eq", "$content-type", "text/plain"]`, nil},
	{"list condition with spaces", formSpec{rawPolicy: b64(`{"expiration": "2144-11-08T04:19:33Z", "conditions": [ ["starts-with", "$key", "up/"] ]}`)},
		403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "up/"]`, nil},
	{"object condition", formSpec{conds: []any{map[string]any{"Content-Type": "application/xml"}}, extra: [][2]string{{"content-type", "text/html"}}},
		403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["eq", "$Content-Type", "application/xml"]`, nil},
	{"key mismatch", formSpec{key: "expected-key", conds: []any{[]any{"eq", "$key", "expected-key"}}, omit: []string{"key"}, omitCond: []string{"key"},
		extra: [][2]string{{"key", "other-key"}}},
		403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["eq", "$key", "expected-key"]`, nil},
	{"one content type breaks starts-with", formSpec{conds: []any{[]any{"starts-with", "$content-type", "text/"}},
		extra: [][2]string{{"content-type", "text/plain, image/jpeg"}}},
		403, "AccessDenied", `Invalid according to Policy: Policy Condition failed: ["starts-with", "$content-type", "text/"]`, nil},
	{"extra field", formSpec{extra: [][2]string{{"x-amz-meta-custom", "v"}}}, 403, "AccessDenied",
		"Invalid according to Policy: Extra input fields: x-amz-meta-custom", nil},
	{"bucket not in policy", formSpec{omitCond: []string{"bucket"}}, 403, "AccessDenied",
		"Invalid according to Policy: Extra input fields: bucket", nil},
	{"too large", formSpec{file: []byte("0123456789"), conds: []any{[]any{"content-length-range", 0, 5}}}, 400, "EntityTooLarge",
		"Your proposed upload exceeds the maximum allowed object size.", map[string]string{"ProposedSize": "10", "MaxSizeAllowed": "5"}},
	{"too small", formSpec{file: []byte("hi"), conds: []any{[]any{"content-length-range", 100, 1024}}}, 400, "EntityTooSmall",
		"Your proposed upload is smaller than the minimum allowed size", map[string]string{"ProposedSize": "2", "MinSizeAllowed": "100"}},
	{"unknown checksum", formSpec{conds: []any{map[string]string{"x-amz-checksum-invalid": "x"}}, extra: [][2]string{{"x-amz-checksum-invalid", "x"}}},
		400, "InvalidRequest", "The algorithm type you specified in x-amz-checksum- header is invalid.", nil},
	{"bad checksum value", formSpec{conds: []any{map[string]string{"x-amz-checksum-crc32": "invalid"}}, extra: [][2]string{{"x-amz-checksum-crc32", "invalid"}}},
		400, "InvalidRequest", "Value for x-amz-checksum-crc32 header is invalid.", nil},
	{"two checksums", formSpec{file: []byte("test data"),
		conds: []any{map[string]string{"x-amz-checksum-crc32": "0wiusg=="}, map[string]string{"x-amz-checksum-crc32c": "M3m0yg=="}},
		extra: [][2]string{{"x-amz-checksum-crc32", "0wiusg=="}, {"x-amz-checksum-crc32c", "M3m0yg=="}}},
		400, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.", nil},
	{"website redirect, as a PUT", formSpec{conds: []any{map[string]string{"x-amz-website-redirect-location": "ftp://x"}},
		extra: [][2]string{{"x-amz-website-redirect-location", "ftp://x"}}},
		400, "InvalidRedirectLocation", "The website redirect location must have a prefix of 'http://' or 'https://' or '/'.", nil},
}

func TestPostFormErrors(t *testing.T) {
	for _, c := range postErrorCases {
		t.Run(c.name, func(t *testing.T) {
			be, h := postGateway(t)
			if c.spec.file == nil {
				c.spec.file = []byte("data")
			}
			rec := postIt(t, h, c.spec)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body.String())
			}
			got := errorElems(t, rec.Body.Bytes())
			if got["Code"] != c.code || got["Message"] != c.msg {
				t.Fatalf("%s %q, want %s %q", got["Code"], got["Message"], c.code, c.msg)
			}
			for k, v := range c.elems {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("<%s> %q (present %v), want %q", k, g, ok, v)
				}
			}
			if n := len(be.buckets["bkt"].objects); n != 0 {
				t.Fatalf("a refused POST stored %d objects", n)
			}
		})
	}
}

func TestPostFormConditionsHold(t *testing.T) {
	cases := []struct {
		name  string
		conds []any
		extra [][2]string
	}{
		{"eq", []any{[]any{"eq", "$content-type", "text/plain"}}, [][2]string{{"content-type", "text/plain"}}},
		{"starts-with", []any{[]any{"starts-with", "$x-amz-meta-env", "prod"}}, [][2]string{{"x-amz-meta-env", "production"}}},
		{"empty prefix", []any{[]any{"starts-with", "$x-amz-meta-tag", ""}}, [][2]string{{"x-amz-meta-tag", "anything"}}},
		{"object", []any{map[string]any{"content-type": "image/png"}}, [][2]string{{"content-type", "image/png"}}},
		{"field names ignore case", []any{[]any{"eq", "$Content-Type", "image/png"}}, [][2]string{{"Content-Type", "image/png"}}},
		{"bucket", []any{[]any{"eq", "$bucket", "bkt"}}, nil},
		{"x-ignore", nil, [][2]string{{"x-ignore-custom", "v"}}},
		{"range", []any{[]any{"content-length-range", 1, 100}}, nil},
		{"each content type", []any{[]any{"starts-with", "$content-type", "text/"}}, [][2]string{{"content-type", "text/plain, text/html"}}},
		{"success_action_status", []any{map[string]any{"success_action_status": "204"}}, [][2]string{{"success_action_status", "204"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be, h := postGateway(t)
			rec := postIt(t, h, formSpec{conds: c.conds, extra: c.extra, file: []byte("data")})
			if rec.Code != http.StatusNoContent {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			if o := be.buckets["bkt"].objects["obj"]; o == nil || string(o.data) != "data" {
				t.Fatalf("stored %+v", o)
			}
		})
	}
}

func TestPostFormSuccessStatus(t *testing.T) {
	for _, status := range []string{"", "200", "201", "204", "302"} {
		t.Run("status "+status, func(t *testing.T) {
			_, h := postGateway(t)
			// A key with ${filename} is allowed by its prefix, as the
			// SDKs' presigned forms do.
			s := formSpec{key: "k/${filename}", file: []byte("hello"), omitCond: []string{"key"},
				conds: []any{[]any{"starts-with", "$key", "k/"}}}
			if status != "" {
				s.extra = [][2]string{{"success_action_status", status}}
				s.conds = append(s.conds, []any{"eq", "$success_action_status", status})
			}
			rec := postIt(t, h, s)
			want := map[string]int{"200": 200, "201": 201}[status]
			if want == 0 {
				want = http.StatusNoContent
			}
			if rec.Code != want {
				t.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body.String())
			}
			if loc := rec.Header().Get("Location"); loc != "http://example.com/bkt/k/upload.bin" {
				t.Fatalf("Location %q", loc)
			}
			if rec.Header().Get("ETag") == "" {
				t.Fatal("no ETag")
			}
			if want != http.StatusCreated {
				if rec.Body.Len() != 0 {
					t.Fatalf("body %q", rec.Body.String())
				}
				return
			}
			var pr struct {
				XMLName                     xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PostResponse"`
				Location, Bucket, Key, ETag string
			}
			decodeXML(t, rec, &pr)
			if pr.Bucket != "bkt" || pr.Key != "k/upload.bin" || pr.ETag != rec.Header().Get("ETag") || pr.Location != rec.Header().Get("Location") {
				t.Fatalf("PostResponse %+v", pr)
			}
		})
	}
}

// TestPostFormDrainsRefusedBody checks that a refused form is read to its
// end before the answer, so the connection stays usable, and that a body
// past the bound closes the connection after the answer.
func TestPostFormDrainsRefusedBody(t *testing.T) {
	for _, c := range []struct {
		name  string
		size  int
		close bool
	}{{"bounded", 1 << 20, false}, {"past the bound", maxPostDrain + 1<<20, true}} {
		t.Run(c.name, func(t *testing.T) {
			_, h := postGateway(t)
			body, ct := formSpec{signature: ptr("bad"), file: bytes.Repeat([]byte("x"), c.size)}.build(t)
			br := bytes.NewReader(body)
			r := httptest.NewRequest(http.MethodPost, "/bkt", br)
			r.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			expect(t, rec, http.StatusForbidden, "SignatureDoesNotMatch")
			if c.close != (rec.Header().Get("Connection") == "close") {
				t.Fatalf("Connection %q", rec.Header().Get("Connection"))
			}
			if !c.close && br.Len() != 0 {
				t.Fatalf("%d bytes of the body left unread", br.Len())
			}
		})
	}
}

func TestPostFormIsPostForm(t *testing.T) {
	g := &gateway{}
	cases := []struct {
		target, auth, ct string
		bucket           string
		ok               bool
	}{
		{"/bkt", "", "multipart/form-data; boundary=x", "bkt", true},
		{"/bkt/", "", "multipart/form-data; boundary=x", "bkt", true},
		{"/bkt", "", "application/json", "bkt", true},
		{"/bkt", "", "", "", false},
		{"/bkt?delete", "", "application/xml", "", false},
		{"/bkt", "AWS4-HMAC-SHA256 x", "multipart/form-data; boundary=x", "", false},
		{"/bkt/key", "", "multipart/form-data; boundary=x", "", false},
		{"/", "", "multipart/form-data; boundary=x", "", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, c.target, strings.NewReader(""))
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.ct != "" {
			r.Header.Set("Content-Type", c.ct)
		}
		if b, ok := g.isPostForm(r); ok != c.ok || b != c.bucket {
			t.Errorf("%s %q: %q %v", c.target, c.auth, b, ok)
		}
	}
}
