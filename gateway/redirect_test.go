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
	cases := []struct {
		name, method, target string
		header               map[string]string
		want                 string
	}{
		{"GET", http.MethodGet, "/bkt/src", nil, "/elsewhere"},
		{"HEAD", http.MethodHead, "/bkt/src", nil, "/elsewhere"},
	}
	copies := []struct {
		name   string
		header map[string]string
		want   string
	}{
		{"COPY drops the source's", nil, ""},
		{"COPY takes the request's", map[string]string{hdr: "http://example.com/"}, "http://example.com/"},
		{"REPLACE without one", map[string]string{"X-Amz-Metadata-Directive": "REPLACE"}, ""},
		{"REPLACE takes the request's", map[string]string{"X-Amz-Metadata-Directive": "REPLACE", hdr: "/r"}, "/r"},
	}
	for i, c := range copies {
		dst := "/bkt/copy" + strings.Repeat("x", i)
		hd := map[string]string{"X-Amz-Copy-Source": "bkt/src"}
		for k, v := range c.header {
			hd[k] = v
		}
		mustDo(t, h, req{method: http.MethodPut, target: dst, header: hd})
		cases = append(cases, struct {
			name, method, target string
			header               map[string]string
			want                 string
		}{c.name, http.MethodHead, dst, nil, c.want})
	}
	for _, c := range cases {
		rec := do(h, req{method: c.method, target: c.target, header: c.header})
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
