package gateway

import (
	"net/http"
	"testing"
	"time"
)

func TestCopyObject(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "src", nil)
	setup(t, h, "dst", nil)
	mustDo(t, h, req{method: http.MethodPut, target: "/src/a%20b/c", body: "payload", header: map[string]string{
		"Content-Type": "text/plain", "X-Amz-Meta-K": "orig", "Cache-Control": "no-cache",
	}})
	srcInfo, _, _ := be.object("src", "a b/c")

	cases := []struct {
		name     string
		source   string
		hdr      map[string]string
		dstKey   string
		wantMeta string
		wantCT   string
	}{
		{"default copies metadata", "src/a%20b/c", nil, "d1", "orig", "text/plain"},
		{"leading slash and versionId", "/src/a%20b/c?versionId=null", nil, "d2", "orig", "text/plain"},
		{"explicit COPY ignores new metadata", "src/a%20b/c", map[string]string{
			"X-Amz-Metadata-Directive": "COPY", "X-Amz-Meta-K": "new", "Content-Type": "x/y"}, "d3", "orig", "text/plain"},
		{"REPLACE takes request metadata", "src/a%20b/c", map[string]string{
			"X-Amz-Metadata-Directive": "REPLACE", "X-Amz-Meta-K": "new", "Content-Type": "x/y"}, "d4", "new", "x/y"},
		{"REPLACE without Content-Type", "src/a%20b/c", map[string]string{
			"X-Amz-Metadata-Directive": "REPLACE"}, "d5", "", "binary/octet-stream"},
	}
	for _, c := range cases {
		hdr := map[string]string{"X-Amz-Copy-Source": c.source}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		var res copyObjectResult
		decodeXML(t, mustDo(t, h, req{method: http.MethodPut, target: "/dst/" + c.dstKey, header: hdr}), &res)
		if res.ETag != quoteETag(srcInfo.ETag) {
			t.Errorf("%s: ETag %q", c.name, res.ETag)
		}
		if _, err := time.Parse(iso8601, res.LastModified); err != nil {
			t.Errorf("%s: LastModified %q: %v", c.name, res.LastModified, err)
		}
		rec := mustDo(t, h, req{method: http.MethodGet, target: "/dst/" + c.dstKey})
		if rec.Body.String() != "payload" || metaHeader(rec.Header(), "k") != c.wantMeta || rec.Header().Get("Content-Type") != c.wantCT {
			t.Errorf("%s: got %q meta %q type %q", c.name, rec.Body.String(), metaHeader(rec.Header(), "k"), rec.Header().Get("Content-Type"))
		}
	}
}

func TestCopyObjectErrors(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "src", map[string]string{"k": "v"})
	before := be.mutations()
	cases := []struct {
		name   string
		target string
		hdr    map[string]string
		status int
		code   string
	}{
		{"to itself", "/src/k", map[string]string{"X-Amz-Copy-Source": "src/k"}, 400, "InvalidRequest"},
		{"to itself with COPY", "/src/k", map[string]string{"X-Amz-Copy-Source": "/src/k", "X-Amz-Metadata-Directive": "COPY"}, 400, "InvalidRequest"},
		{"no key", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src"}, 400, "InvalidArgument"},
		{"empty key", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/"}, 400, "InvalidArgument"},
		{"empty source", "/src/k2", map[string]string{"X-Amz-Copy-Source": ""}, 400, "InvalidArgument"},
		{"bad escape", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/%zz"}, 400, "InvalidArgument"},
		{"bad bucket name", "/src/k2", map[string]string{"X-Amz-Copy-Source": "SRC/k"}, 400, "InvalidArgument"},
		{"bad tagging directive", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/k", "X-Amz-Tagging-Directive": "MERGE"}, 400, "InvalidArgument"},
		{"source above the bucket", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/a/../../k"}, 400, "InvalidArgument"},
		{"source key missing", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/"}, 400, "InvalidArgument"},
		{"source not UTF-8", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/%C3%28"}, 400, "InvalidArgument"},
		{"bad directive", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/k", "X-Amz-Metadata-Directive": "MERGE"}, 400, "InvalidArgument"},
		{"missing source", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/nope"}, 404, "NoSuchKey"},
		{"missing source bucket", "/src/k2", map[string]string{"X-Amz-Copy-Source": "nobkt/k"}, 404, "NoSuchBucket"},
		{"missing destination bucket", "/nobkt/k2", map[string]string{"X-Amz-Copy-Source": "src/k"}, 404, "NoSuchBucket"},
		{"source if-match fails", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/k", "X-Amz-Copy-Source-If-Match": `"nope"`}, 412, "PreconditionFailed"},
		{"source if-none-match fails", "/src/k2", map[string]string{"X-Amz-Copy-Source": "src/k", "X-Amz-Copy-Source-If-None-Match": "*"}, 412, "PreconditionFailed"},
	}
	for _, c := range cases {
		rec := do(h, req{method: http.MethodPut, target: c.target, header: c.hdr})
		if rec.Code != c.status || errorCode(t, rec) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, rec.Code, errorCode(t, rec), c.status, c.code)
		}
	}
	if be.mutations() != before {
		t.Error("rejected copies changed the backend")
	}
	// Copying onto itself is allowed when it changes metadata or class.
	mustDo(t, h, req{method: http.MethodPut, target: "/src/k", header: map[string]string{
		"X-Amz-Copy-Source": "src/k", "X-Amz-Metadata-Directive": "REPLACE", "X-Amz-Meta-New": "1"}})
	mustDo(t, h, req{method: http.MethodPut, target: "/src/k", header: map[string]string{
		"X-Amz-Copy-Source": "src/k", "X-Amz-Storage-Class": "COLD"}})
	info, _, _ := be.object("src", "k")
	if info.UserMeta["new"] != "1" || info.StorageClass != "COLD" {
		t.Errorf("self-copies not applied: %+v", info)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/src/k3", header: map[string]string{
		"X-Amz-Copy-Source": "src/k", "X-Amz-Copy-Source-If-Match": quoteETag(info.ETag)}})
}
