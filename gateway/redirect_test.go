package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestWebsiteRedirect: x-amz-website-redirect-location is checked as S3
// checks it, stored, returned on GET and HEAD, and never copied from a
// copy's source (only taken from the copy request).
func TestWebsiteRedirect(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	const hdr = "X-Amz-Website-Redirect-Location"
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/src", body: "x", header: map[string]string{hdr: "/elsewhere"}})
	mp := mustDo(t, h, req{method: http.MethodPost, target: "/bkt/mp?uploads", header: map[string]string{hdr: "https://example.com/a"}})
	if mp.Code != http.StatusOK {
		t.Fatalf("CreateMultipartUpload with a redirect: %d", mp.Code)
	}
	reads := []struct{ name, method, target, want string }{
		{"GET", http.MethodGet, "/bkt/src", "/elsewhere"},
		{"HEAD", http.MethodHead, "/bkt/src", "/elsewhere"},
	}
	copies := []struct {
		name, source, target string
		header               map[string]string
		want                 string
	}{
		{"COPY drops the source's", "bkt/src", "/bkt/c1", nil, ""},
		{"COPY takes the request's", "bkt/src", "/bkt/c2", map[string]string{hdr: "http://example.com/"}, "http://example.com/"},
		{"REPLACE without one", "bkt/src", "/bkt/c3", map[string]string{"X-Amz-Metadata-Directive": "REPLACE"}, ""},
		{"REPLACE takes the request's", "bkt/src", "/bkt/c4", map[string]string{"X-Amz-Metadata-Directive": "REPLACE", hdr: "/r"}, "/r"},
		// c1 has none: setting one is a change, so the copy is allowed.
		{"onto itself with a new one", "bkt/c1", "/bkt/c1", map[string]string{hdr: "/s"}, "/s"},
	}
	for _, c := range copies {
		hd := map[string]string{"X-Amz-Copy-Source": c.source}
		for k, v := range c.header {
			hd[k] = v
		}
		mustDo(t, h, req{method: http.MethodPut, target: c.target, header: hd})
		if got := mustDo(t, h, req{method: http.MethodHead, target: c.target}).Header().Get(hdr); got != c.want {
			t.Errorf("%s: redirect %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range reads {
		rec := do(h, req{method: c.method, target: c.target})
		if rec.Code != http.StatusOK || rec.Header().Get(hdr) != c.want {
			t.Errorf("%s %s: %d, redirect %q, want %q", c.name, c.target, rec.Code, rec.Header().Get(hdr), c.want)
		}
	}

	before := be.mutations()
	for _, v := range []string{"ftp://example.com", "example.com/a", "/" + strings.Repeat("a", maxRedirect)} {
		for _, rq := range []req{
			{method: http.MethodPut, target: "/bkt/bad", body: "x", header: map[string]string{hdr: v}},
			{method: http.MethodPut, target: "/bkt/bad", header: map[string]string{hdr: v, "X-Amz-Copy-Source": "bkt/src"}},
			{method: http.MethodPost, target: "/bkt/bad?uploads", header: map[string]string{hdr: v}},
		} {
			expect(t, do(h, rq), http.StatusBadRequest, "InvalidRedirectLocation")
		}
	}
	if n := be.mutations(); n != before {
		t.Fatalf("refused requests changed the store: %d mutations, want %d", n, before)
	}
}
