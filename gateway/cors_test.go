package gateway

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
	"tessera/object"
)

// corsBackend adds bucket configuration storage to the fake backend.
type corsBackend struct {
	*fakeBackend
	mu   sync.Mutex
	cfgs map[string][]byte
}

func (c *corsBackend) PutBucketConfig(ctx context.Context, bucket, name string, data []byte) error {
	if _, err := c.HeadBucket(ctx, bucket); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfgs[bucket+"/"+name] = data
	return nil
}

func (c *corsBackend) GetBucketConfig(ctx context.Context, bucket, name string) ([]byte, error) {
	if _, err := c.HeadBucket(ctx, bucket); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.cfgs[bucket+"/"+name]
	if len(d) == 0 {
		return nil, object.ErrNoBucketConfig
	}
	return d, nil
}

func newCORSGateway(t *testing.T, auth Authenticator) http.Handler {
	t.Helper()
	return gatewayOver(t, &corsBackend{fakeBackend: newFakeBackend(), cfgs: map[string][]byte{}}, auth)
}

func gatewayOver(t *testing.T, be Backend, auth Authenticator) http.Handler {
	t.Helper()
	h, err := New(Config{Backend: be, Auth: auth, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// corsPair is two gateways over one backend: one letting every request
// in, one denying every signature.
func corsPair(t *testing.T) (open, closed http.Handler) {
	t.Helper()
	be := &corsBackend{fakeBackend: newFakeBackend(), cfgs: map[string][]byte{}}
	open = gatewayOver(t, be, allowAll{})
	setup(t, open, "bkt", map[string]string{"k": "hello"})
	setup(t, open, "plain", map[string]string{"k": "hello"})
	mustDo(t, open, req{method: http.MethodPut, target: "/bkt?cors", body: testCORS})
	return open, gatewayOver(t, be, denyWith{err: sigv4.ErrMissingAuth})
}

const testCORS = `<CORSConfiguration>
 <CORSRule>
  <ID>site</ID>
  <AllowedOrigin>https://www.example.com</AllowedOrigin>
  <AllowedOrigin>https://*.example.org</AllowedOrigin>
  <AllowedMethod>GET</AllowedMethod>
  <AllowedMethod>PUT</AllowedMethod>
  <AllowedHeader>x-amz-*</AllowedHeader>
  <AllowedHeader>Content-Type</AllowedHeader>
  <ExposeHeader>ETag</ExposeHeader>
  <ExposeHeader>x-amz-request-id</ExposeHeader>
  <MaxAgeSeconds>600</MaxAgeSeconds>
 </CORSRule>
 <CORSRule>
  <AllowedOrigin>*</AllowedOrigin>
  <AllowedMethod>HEAD</AllowedMethod>
 </CORSRule>
</CORSConfiguration>`

func TestBucketCorsConfig(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?cors"}), http.StatusNotFound, "NoSuchCORSConfiguration")
	expect(t, do(h, req{method: http.MethodGet, target: "/nope?cors"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodPut, target: "/nope?cors", body: testCORS}), http.StatusNotFound, "NoSuchBucket")

	rule := func(inner string) string {
		return "<CORSConfiguration><CORSRule>" + inner + "</CORSRule></CORSConfiguration>"
	}
	anyRule := func(inner string) string {
		return rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>" + inner)
	}
	const malformed = "The XML you provided was not well-formed or did not validate against our published schema."
	bad := []struct {
		name, body string
		code, msg  string
	}{
		{"not xml", "<CORS", "MalformedXML", malformed},
		{"wrong root", "<Foo><CORSRule/></Foo>", "MalformedXML", malformed},
		{"no rules", "<CORSConfiguration></CORSConfiguration>", "MalformedXML", malformed},
		{"no origin", rule("<AllowedMethod>GET</AllowedMethod>"), "MalformedXML", malformed},
		{"no method", rule("<AllowedOrigin>*</AllowedOrigin>"), "MalformedXML", malformed},
		{"bad method", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"), "InvalidRequest",
			"Found unsupported HTTP method in CORS config. Unsupported method is PATCH"},
		{"lowercase method", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>"), "InvalidRequest",
			"Found unsupported HTTP method in CORS config. Unsupported method is get"},
		{"two origin wildcards", rule("<AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), "InvalidRequest",
			`AllowedOrigin "*.*" can not have more than one wildcard.`},
		{"two header wildcards", anyRule("<AllowedHeader>*a*</AllowedHeader>"), "InvalidRequest",
			`AllowedHeader "*a*" can not have more than one wildcard.`},
		{"header with space", anyRule("<AllowedHeader>X-Amz-Date</AllowedHeader><AllowedHeader>invalid header</AllowedHeader>"), "InvalidRequest",
			`AllowedHeader "invalid header" contains invalid character.`},
		{"header with colon", anyRule("<AllowedHeader>X-Custom:Header</AllowedHeader>"), "InvalidRequest",
			`AllowedHeader "X-Custom:Header" contains invalid character.`},
		{"header with quotes", anyRule(`<AllowedHeader>X"Quote"</AllowedHeader>`), "InvalidRequest",
			`AllowedHeader "X"Quote"" contains invalid character.`},
		{"expose header with slash", anyRule("<ExposeHeader>ETag</ExposeHeader><ExposeHeader>Bad/Header</ExposeHeader>"), "InvalidRequest",
			`AllowedHeader "Bad/Header" contains invalid character.`},
		{"expose header non-ascii", anyRule("<ExposeHeader>NonAsciiŁ</ExposeHeader>"), "InvalidRequest",
			`AllowedHeader "NonAsciiŁ" contains invalid character.`},
		{"expose wildcard", anyRule("<ExposeHeader>*</ExposeHeader>"), "InvalidRequest",
			`ExposeHeader "*" contains wildcard. We currently do not support wildcard for ExposeHeader.`},
		{"long id", rule("<ID>" + strings.Repeat("i", 256) + "</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), "InvalidRequest",
			"The ID of a CORSRule can not be longer than 255 characters."},
		{"too many rules", "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", 101) + "</CORSConfiguration>", "MalformedXML", malformed},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, req{method: http.MethodPut, target: "/bkt?cors", body: tc.body})
			expect(t, rec, http.StatusBadRequest, tc.code)
			if got := errorOf(t, rec).Message; got != tc.msg {
				t.Errorf("message %q, want %q", got, tc.msg)
			}
			// Nothing was stored.
			expect(t, do(h, req{method: http.MethodGet, target: "/bkt?cors"}), http.StatusNotFound, "NoSuchCORSConfiguration")
		})
	}

	// Accepted as S3 accepts them: a negative max age (given back as
	// sent), wildcard and empty header names, any token.
	odd := anyRule("<AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader></AllowedHeader><AllowedHeader>!#$%&amp;'*+-.^_`|~09</AllowedHeader>" +
		"<ExposeHeader>x-amz-meta-a</ExposeHeader><MaxAgeSeconds>-100</MaxAgeSeconds>")
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?cors", body: odd})
	var oddGot corsConfig
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?cors"}), &oddGot)
	if r := oddGot.Rules[0]; r.MaxAgeSeconds == nil || *r.MaxAgeSeconds != -100 || len(r.AllowedHeaders) != 3 {
		t.Fatalf("odd rule round trip: %+v", oddGot)
	}

	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?cors", body: testCORS})
	var got corsConfig
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?cors"}), &got)
	if len(got.Rules) != 2 || got.Rules[0].ID != "site" || len(got.Rules[0].AllowedOrigins) != 2 ||
		got.Rules[0].MaxAgeSeconds == nil || *got.Rules[0].MaxAgeSeconds != 600 || got.Rules[1].AllowedMethods[0] != "HEAD" {
		t.Fatalf("round trip: %+v", got)
	}
	rec := do(h, req{method: http.MethodDelete, target: "/bkt?cors"})
	expect(t, rec, http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?cors"}), http.StatusNotFound, "NoSuchCORSConfiguration")
}

// errorOf decodes an S3 error body.
func errorOf(t testing.TB, rec *httptest.ResponseRecorder) errorResponse {
	t.Helper()
	var e errorResponse
	if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body does not parse: %v\n%s", err, rec.Body.String())
	}
	return e
}

func TestWildMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "https://a", true},
		{"https://*.example.com", "https://a.example.com", true},
		{"https://*.example.com", "https://example.com", false},
		{"https://*.example.com", "http://a.example.com", false},
		{"http://*", "http://x", true},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"exact", "exact", true},
		{"exact", "Exact", false},
	}
	for _, tc := range cases {
		if got := wildMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func FuzzParseCORS(f *testing.F) {
	f.Add([]byte(testCORS))
	f.Add([]byte("<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>"))
	f.Add([]byte("<CORSConfiguration/>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseCORS(body)
		if err != nil {
			return
		}
		// What validation accepts must survive the stored round trip.
		data, err := xml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal accepted config: %v", err)
		}
		c2, err := parseCORS(data)
		if err != nil || len(c2.Rules) != len(c.Rules) {
			t.Fatalf("re-parse of stored config: %v (%d rules, want %d)\n%s", err, len(c2.Rules), len(c.Rules), data)
		}
		// Every rule matches a request made of its own first values.
		for _, r := range c.Rules {
			cr := corsRequest{origin: r.AllowedOrigins[0], method: r.AllowedMethods[0]}
			if c.match(cr) == nil {
				t.Fatalf("rule %+v does not match %+v", r, cr)
			}
		}
	})
}

func TestBucketCorsContentMD5(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	sum := md5.Sum([]byte(testCORS))
	good := base64.StdEncoding.EncodeToString(sum[:])
	cases := []struct {
		name, md5 string
		status    int
		code, msg string
	}{
		{"not base64", "invalid", 400, "InvalidDigest", "The Content-Md5 you specified is not valid."},
		{"short", base64.StdEncoding.EncodeToString([]byte("short")), 400, "InvalidDigest", "The Content-Md5 you specified is not valid."},
		{"wrong", "uU0nuZNNPgilLlLX2n2r+s==", 400, "BadDigest", "The Content-MD5 you specified did not match what we received."},
		{"right", good, 200, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, req{method: http.MethodPut, target: "/bkt?cors", body: testCORS, header: map[string]string{"Content-MD5": tc.md5}})
			expect(t, rec, tc.status, tc.code)
			if tc.status != 200 {
				if got := errorOf(t, rec).Message; got != tc.msg {
					t.Errorf("message %q, want %q", got, tc.msg)
				}
				expect(t, do(h, req{method: http.MethodGet, target: "/bkt?cors"}), http.StatusNotFound, "NoSuchCORSConfiguration")
			}
		})
	}
}
