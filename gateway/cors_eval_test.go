package gateway

import (
	"net/http"
	"strings"
	"testing"
)

const (
	msgCORSNotAllowed = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
	msgCORSNotEnabled = "CORSResponse: CORS is not enabled for this bucket."
	msgNoOrigin       = "Insufficient information. Origin request header needed."
)

// corsHeaders are the response headers a CORS answer may carry; every
// case states all of them, "" for absent.
var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Expose-Headers", "Access-Control-Max-Age", "Vary",
}

// want lists corsHeaders' expected values in order.
type want [7]string

// siteRule is testCORS's first rule answering origin o.
func siteRule(o, headers string) want {
	return want{o, "true", "GET, PUT", headers, "ETag, x-amz-request-id", "600", corsVary}
}

func checkCORSHeaders(t *testing.T, h http.Header, w want) {
	t.Helper()
	for i, k := range corsHeaders {
		if got := strings.Join(h.Values(k), "; "); got != w[i] {
			t.Errorf("%s = %q, want %q", k, got, w[i])
		}
	}
}

// preflightReq is an OPTIONS request; empty arguments leave the header out.
func preflightReq(target, origin, method, headers string) req {
	hd := map[string]string{}
	for k, v := range map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers} {
		if v != "" {
			hd[k] = v
		}
	}
	return req{method: http.MethodOptions, target: target, header: hd}
}

func TestCorsPreflight(t *testing.T) {
	// Preflights are unauthenticated: the gateway runs behind a verifier
	// that denies everything.
	open, closed := corsPair(t)
	ok := []struct {
		name string
		rq   req
		want want
	}{
		{"exact origin", preflightReq("/bkt/a/key.txt", "https://www.example.com", "PUT", "Content-Type, X-Amz-Date"),
			siteRule("https://www.example.com", "content-type, x-amz-date")},
		{"wildcard origin inside", preflightReq("/bkt/k", "https://cdn.example.org", "GET", ""), siteRule("https://cdn.example.org", "")},
		{"bucket path", preflightReq("/bkt", "https://www.example.com", "GET", ""), siteRule("https://www.example.com", "")},
		{"browser header list", preflightReq("/bkt/k", "https://www.example.com", "GET", "content-type,x-amz-content-sha256,x-amz-date"),
			siteRule("https://www.example.com", "content-type, x-amz-content-sha256, x-amz-date")},
		{"empty list elements", preflightReq("/bkt/k", "https://www.example.com", "GET", " ,Content-Type,, x-amz-date ,"),
			siteRule("https://www.example.com", "content-type, x-amz-date")},
		{"star rule", preflightReq("/bkt/k", "http://anything", "HEAD", ""), want{"*", "", "HEAD", "", "", "", corsVary}},
	}
	type refusal struct {
		name          string
		rq            req
		status        int
		code, msg     string
		method, rtype string // the error's Method and ResourceType, "" for absent
	}
	refused := []refusal{
		{"origin not allowed", preflightReq("/bkt/k", "https://evil.com", "GET", ""), 403, "AccessForbidden", msgCORSNotAllowed, "GET", "OBJECT"},
		{"origin not allowed, bucket", preflightReq("/bkt", "https://evil.com", "GET", ""), 403, "AccessForbidden", msgCORSNotAllowed, "GET", "BUCKET"},
		{"suffix does not match", preflightReq("/bkt/k", "https://example.org", "GET", ""), 403, "AccessForbidden", msgCORSNotAllowed, "GET", "OBJECT"},
		{"method not allowed", preflightReq("/bkt/k", "https://www.example.com", "DELETE", ""), 403, "AccessForbidden", msgCORSNotAllowed, "DELETE", "OBJECT"},
		{"header not allowed", preflightReq("/bkt/k", "https://www.example.com", "PUT", "x-amz-date,authorization"), 403, "AccessForbidden", msgCORSNotAllowed, "PUT", "OBJECT"},
		{"no method", preflightReq("/bkt/k", "https://www.example.com", "", ""), 403, "AccessForbidden", msgCORSNotAllowed, "OPTIONS", "OBJECT"},
		{"no config", preflightReq("/plain/k", "https://www.example.com", "GET", "x-amz-date"), 403, "AccessForbidden", msgCORSNotEnabled, "GET", "BUCKET"},
		{"no config, no method", preflightReq("/plain/k", "https://www.example.com", "", ""), 403, "AccessForbidden", msgCORSNotEnabled, "OPTIONS", "BUCKET"},
		{"no bucket", preflightReq("/nope/k", "http://localhost:7070", "POST", "X-Amz-Date"), 403, "AccessForbidden", msgCORSNoBucket, "POST", "BUCKET"},
		{"no origin", preflightReq("/bkt/k", "", "GET", ""), 400, "BadRequest", msgNoOrigin, "", ""},
		{"no origin, no bucket", preflightReq("/nope/k", "", "GET", ""), 400, "BadRequest", msgNoOrigin, "", ""},
		{"unknown method", preflightReq("/bkt/k", "https://www.example.com", "TRACE", ""), 400, "BadRequest", "Invalid Access-Control-Request-Method: TRACE", "", ""},
		{"lowercase method", preflightReq("/plain/k", "https://www.example.com", "get", ""), 400, "BadRequest", "Invalid Access-Control-Request-Method: get", "", ""},
		{"header with space", preflightReq("/plain/k", "https://www.example.com", "GET", "X-Amz-Date,invalid header"), 400, "BadRequest",
			`Access-Control-Request-Headers "invalid header" contains invalid character.`, "", ""},
		{"header named as sent", preflightReq("/bkt/k", "https://www.example.com", "GET", "Content-Encoding, Bad/Header"), 400, "BadRequest",
			`Access-Control-Request-Headers " Bad/Header" contains invalid character.`, "", ""},
		{"non-ascii header", preflightReq("/bkt/k", "https://www.example.com", "GET", "Content-Length,NonAsciiŁ"), 400, "BadRequest",
			`Access-Control-Request-Headers "NonAsciiŁ" contains invalid character.`, "", ""},
		{"quoted header", preflightReq("/bkt/k", "https://www.example.com", "GET", `X"Quote"`), 400, "BadRequest",
			`Access-Control-Request-Headers "X"Quote"" contains invalid character.`, "", ""},
	}
	for _, gw := range []struct {
		name string
		h    http.Handler
	}{{"authenticated", open}, {"unauthenticated", closed}} {
		for _, tc := range ok {
			t.Run(gw.name+"/"+tc.name, func(t *testing.T) {
				rec := do(gw.h, tc.rq)
				expect(t, rec, http.StatusOK, "")
				checkCORSHeaders(t, rec.Header(), tc.want)
			})
		}
		for _, tc := range refused {
			t.Run(gw.name+"/"+tc.name, func(t *testing.T) {
				rec := do(gw.h, tc.rq)
				expect(t, rec, tc.status, tc.code)
				e := errorOf(t, rec)
				if e.Message != tc.msg {
					t.Errorf("message %q, want %q", e.Message, tc.msg)
				}
				fields := map[string]string{}
				for _, f := range e.Fields {
					fields[f.XMLName.Local] = f.Value
				}
				if fields["Method"] != tc.method || fields["ResourceType"] != tc.rtype {
					t.Errorf("fields %v, want Method %q ResourceType %q", fields, tc.method, tc.rtype)
				}
				checkCORSHeaders(t, rec.Header(), want{})
			})
		}
	}
}

func TestCorsPreflightNegativeMaxAge(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?cors", body: "<CORSConfiguration><CORSRule>" +
		"<AllowedOrigin>http://origin.com</AllowedOrigin><AllowedMethod>POST</AllowedMethod><MaxAgeSeconds>-100</MaxAgeSeconds>" +
		"</CORSRule></CORSConfiguration>"})
	rec := mustDo(t, h, preflightReq("/bkt/k", "http://origin.com", "POST", ""))
	checkCORSHeaders(t, rec.Header(), want{"http://origin.com", "true", "POST", "", "", "-100", corsVary})
}

func TestCorsActualRequests(t *testing.T) {
	open, closed := corsPair(t)
	withCORS := func(method, target string, kv ...string) req {
		hd := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			hd[kv[i]] = kv[i+1]
		}
		return req{method: method, target: target, header: hd}
	}
	const site = "https://www.example.com"
	cases := []struct {
		name   string
		h      http.Handler
		rq     req
		status int
		want   want
	}{
		{"get allowed", open, withCORS("GET", "/bkt/k", "Origin", site), 200, siteRule(site, "")},
		{"head star rule", open, withCORS("HEAD", "/bkt/k", "Origin", "http://x.test"), 200, want{"*", "", "HEAD", "", "", "", corsVary}},
		{"error answer keeps headers", open, withCORS("GET", "/bkt/missing", "Origin", "https://a.example.org"), 404, siteRule("https://a.example.org", "")},
		{"auth failure keeps headers", closed, withCORS("GET", "/bkt/k", "Origin", site), 403, siteRule(site, "")},
		{"origin not allowed", open, withCORS("GET", "/bkt/k", "Origin", "https://evil.test"), 200, want{}},
		{"bucket without config", open, withCORS("GET", "/plain/k", "Origin", site), 200, want{}},
		{"no origin", open, withCORS("GET", "/bkt/k"), 200, want{}},
		// S3 evaluates Access-Control-Request-Method and -Headers when an
		// actual request carries them.
		{"request method decides", open, withCORS("GET", "/bkt/k", "Origin", site, "Access-Control-Request-Method", "DELETE"), 200, want{}},
		{"request method allowed", open, withCORS("GET", "/bkt/k", "Origin", "http://x.test", "Access-Control-Request-Method", "HEAD"), 200,
			want{"*", "", "HEAD", "", "", "", corsVary}},
		{"request headers allowed", open, withCORS("GET", "/bkt/k", "Origin", site, "Access-Control-Request-Headers", "X-Amz-Date"), 200,
			siteRule(site, "x-amz-date")},
		{"request headers not allowed", open, withCORS("GET", "/bkt/k", "Origin", site, "Access-Control-Request-Headers", "authorization"), 200, want{}},
		{"bad request method", open, withCORS("GET", "/bkt/k", "Origin", site, "Access-Control-Request-Method", "invalid_method"), 400, want{}},
		{"bad request header", open, withCORS("GET", "/bkt/k", "Origin", site, "Access-Control-Request-Headers", "invalid header"), 400, want{}},
		{"bad request method, no config", open, withCORS("GET", "/plain/k", "Origin", site, "Access-Control-Request-Method", "invalid_method"), 200, want{}},
		// Last: it deletes the object the others read.
		{"method not in rule", open, withCORS("DELETE", "/bkt/k", "Origin", site), 204, want{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(tc.h, tc.rq)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if tc.status == 400 && errorCode(t, rec) != "BadRequest" {
				t.Fatalf("code %q, want BadRequest", errorCode(t, rec))
			}
			checkCORSHeaders(t, rec.Header(), tc.want)
		})
	}
	// The refused requests changed nothing: the object is gone only
	// through the DELETE above.
	expect(t, do(open, req{method: http.MethodGet, target: "/bkt/k"}), http.StatusNotFound, "NoSuchKey")
}

func TestCorsRefusedPutChangesNothing(t *testing.T) {
	open, _ := corsPair(t)
	rec := do(open, req{method: http.MethodPut, target: "/bkt/new", body: "data", header: map[string]string{
		"Origin": "https://www.example.com", "Access-Control-Request-Method": "get"}})
	expect(t, rec, http.StatusBadRequest, "BadRequest")
	expect(t, do(open, req{method: http.MethodGet, target: "/bkt/new"}), http.StatusNotFound, "NoSuchKey")
}

func TestCorsWithoutStore(t *testing.T) {
	// A backend that cannot store configurations answers 501 to ?cors
	// and refuses preflights as "not enabled".
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		expect(t, do(h, req{method: m, target: "/bkt?cors", body: testCORS}), http.StatusNotImplemented, "NotImplemented")
	}
	rec := do(h, preflightReq("/bkt/k", "https://www.example.com", "GET", ""))
	expect(t, rec, http.StatusForbidden, "AccessForbidden")
	if m := errorOf(t, rec).Message; m != msgCORSNotEnabled {
		t.Errorf("message %q", m)
	}
}

func TestCorsRequestHeaders(t *testing.T) {
	cases := []struct {
		in   []string
		want string // names joined by "|", or the error
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"X-Amz-Date"}, "x-amz-date"},
		{[]string{"a,b", "C"}, "a|b|c"},
		{[]string{" a ,\tb\t, ,"}, "a|b"},
		{[]string{"a,b c"}, `BadRequest: Access-Control-Request-Headers "b c" contains invalid character.`},
		{[]string{"tab\tchar,X-Something-Valid"}, "BadRequest: Access-Control-Request-Headers \"tab\tchar\" contains invalid character."},
		{[]string{"bad@char"}, `BadRequest: Access-Control-Request-Headers "bad@char" contains invalid character.`},
		{[]string{"Emoji😀"}, `BadRequest: Access-Control-Request-Headers "Emoji😀" contains invalid character.`},
	}
	for _, tc := range cases {
		got, err := requestHeaders(tc.in)
		s := strings.Join(got, "|")
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("requestHeaders(%q) = %q, want %q", tc.in, s, tc.want)
		}
	}
}

func FuzzCORSRequestHeaders(f *testing.F) {
	f.Add("X-Amz-Date,X-Amz-Content-Sha256")
	f.Add("Content-Encoding, Bad/Header")
	f.Add(" , ,a\t")
	f.Fuzz(func(t *testing.T, v string) {
		got, err := requestHeaders([]string{v})
		if err != nil {
			if !isCode(err, errBadRequest) {
				t.Fatalf("error %v is not BadRequest", err)
			}
			return
		}
		// What is accepted is lowercase tokens, and reads back the same
		// from the answer's own list syntax.
		for _, h := range got {
			if !isToken(h) || h != strings.ToLower(h) {
				t.Fatalf("accepted %q from %q", h, v)
			}
		}
		again, err := requestHeaders([]string{strings.Join(got, ", ")})
		if err != nil || strings.Join(again, ",") != strings.Join(got, ",") {
			t.Fatalf("round trip of %q: %q, %v", got, again, err)
		}
	})
}
