package gateway

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Copy-source conditions follow S3's precedence and always fail with 412
// naming the condition, as AWS answers them (a matching
// x-amz-copy-source-if-match wins over a failing if-unmodified-since; a
// failing if-none-match is 412 even where GET would say 304).
func TestCopySourceConditions(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "src", map[string]string{"k": "data"})
	info, _, _ := be.object("src", "k")
	etag := quoteETag(info.ETag)
	before := info.ModTime.Add(-time.Hour).Format(http.TimeFormat)
	after := info.ModTime.Add(time.Hour).Format(http.TimeFormat)
	same := info.ModTime.Format(http.TimeFormat)
	future := time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat)
	const (
		im  = "X-Amz-Copy-Source-If-Match"
		inm = "X-Amz-Copy-Source-If-None-Match"
		ims = "X-Amz-Copy-Source-If-Modified-Since"
		ius = "X-Amz-Copy-Source-If-Unmodified-Since"
	)
	cases := []struct {
		name      string
		hdr       map[string]string
		condition string // "" when the copy proceeds
	}{
		{"all failing: if-match first", map[string]string{im: `"nope"`, inm: etag, ims: after, ius: before}, "x-amz-copy-source-If-Match"},
		{"if-unmodified-since before if-none-match", map[string]string{inm: etag, ims: after, ius: before}, "x-amz-copy-source-If-Unmodified-Since"},
		{"if-none-match false, if-modified-since true", map[string]string{inm: etag, ims: before}, "x-amz-copy-source-If-None-Match"},
		{"if-none-match false alone", map[string]string{inm: etag}, "x-amz-copy-source-If-None-Match"},
		{"if-modified-since false", map[string]string{ims: same}, "x-amz-copy-source-If-Modified-Since"},
		{"if-modified-since after", map[string]string{ims: after}, "x-amz-copy-source-If-Modified-Since"},
		{"if-unmodified-since false", map[string]string{ius: before}, "x-amz-copy-source-If-Unmodified-Since"},
		{"unquoted if-none-match", map[string]string{inm: info.ETag}, "x-amz-copy-source-If-None-Match"},
		{"if-match true, if-unmodified-since false", map[string]string{im: etag, ius: before}, ""},
		{"if-none-match true, if-modified-since false", map[string]string{inm: `"other"`, ims: after}, ""},
		{"if-modified-since in the future is ignored", map[string]string{ims: future}, ""},
		{"all true", map[string]string{im: info.ETag, inm: `"other"`, ims: before, ius: same}, ""},
		{"unparseable dates are ignored", map[string]string{ims: "yesterday", ius: "soon"}, ""},
	}
	for _, c := range cases {
		for _, target := range []string{"/src/dst", "/src/part?partNumber=1&uploadId=" + createUpload(t, h, "/src/part", nil)} {
			hdr := map[string]string{"X-Amz-Copy-Source": "src/k"}
			for k, v := range c.hdr {
				hdr[k] = v
			}
			mutations := be.mutations()
			rec := do(h, req{method: http.MethodPut, target: target, header: hdr})
			if c.condition == "" {
				if rec.Code != http.StatusOK {
					t.Errorf("%s (%s): %d %s, want the copy to proceed", c.name, target, rec.Code, rec.Body.String())
				}
				continue
			}
			var body struct {
				Code, Condition string
			}
			if rec.Code != http.StatusPreconditionFailed || xml.Unmarshal(rec.Body.Bytes(), &body) != nil ||
				body.Code != "PreconditionFailed" || body.Condition != c.condition {
				t.Errorf("%s (%s): %d %s, want 412 naming %s", c.name, strings.SplitN(target, "?", 2)[0], rec.Code, rec.Body.String(), c.condition)
			}
			if be.mutations() != mutations {
				t.Errorf("%s: a failed conditional copy changed the backend", c.name)
			}
		}
	}
}

// GET and HEAD name the failed condition of a 412 too; 304s carry no body.
func TestGetConditionNamed(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	info, _, _ := be.object("bkt", "k")
	before := info.ModTime.Add(-time.Hour).Format(http.TimeFormat)
	for hdr, cond := range map[string]string{"If-Match": `"nope"`, "If-Unmodified-Since": before} {
		rec := do(h, req{method: http.MethodGet, target: "/bkt/k", header: map[string]string{hdr: cond}})
		expect(t, rec, http.StatusPreconditionFailed, "PreconditionFailed")
		if !strings.Contains(rec.Body.String(), "<Condition>"+hdr+"</Condition>") {
			t.Errorf("%s: body %s does not name the condition", hdr, rec.Body.String())
		}
	}
}
