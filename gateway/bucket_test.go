package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestNewRequiresBackendAndAuth(t *testing.T) {
	if _, err := New(Config{Auth: allowAll{}}); err == nil {
		t.Error("New without Backend succeeded")
	}
	if _, err := New(Config{Backend: newFakeBackend()}); err == nil {
		t.Error("New without Auth succeeded")
	}
}

func TestBucketLifecycle(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})

	rec := mustDo(t, h, req{method: http.MethodPut, target: "/alpha"})
	if loc, arn := rec.Header().Get("Location"), rec.Header().Get("X-Amz-Bucket-Arn"); loc != "/alpha" || arn != "arn:aws:s3:::alpha" {
		t.Errorf("Location %q, x-amz-bucket-arn %q", loc, arn)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/beta/"})
	// In us-east-1 S3 answers re-creating your own bucket with 200.
	before := be.mutations()
	rec = mustDo(t, h, req{method: http.MethodPut, target: "/alpha"})
	if rec.Code != http.StatusOK || rec.Header().Get("Location") != "/alpha" || be.mutations() != before {
		t.Errorf("re-create in us-east-1: %d Location %q, %d changes", rec.Code, rec.Header().Get("Location"), be.mutations()-before)
	}

	var list listAllMyBucketsResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/"}), &list)
	if len(list.Buckets) != 2 || list.Buckets[0].Name != "alpha" || list.Buckets[1].Name != "beta" {
		t.Fatalf("ListBuckets = %+v", list.Buckets)
	}
	if list.Buckets[0].CreationDate != "2024-05-01T12:00:01.000Z" {
		t.Errorf("CreationDate %q", list.Buckets[0].CreationDate)
	}
	var filtered listAllMyBucketsResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/?prefix=b"}), &filtered)
	if len(filtered.Buckets) != 1 || filtered.Buckets[0].Name != "beta" {
		t.Errorf("ListBuckets prefix=b = %+v", filtered.Buckets)
	}

	rec = mustDo(t, h, req{method: http.MethodHead, target: "/alpha"})
	if rec.Header().Get("X-Amz-Bucket-Region") != "us-east-1" {
		t.Errorf("x-amz-bucket-region %q", rec.Header().Get("X-Amz-Bucket-Region"))
	}
	rec = do(h, req{method: http.MethodHead, target: "/missing"})
	expect(t, rec, http.StatusNotFound, "")
	if rec.Body.Len() != 0 {
		t.Errorf("HEAD error has a body: %q", rec.Body.String())
	}

	mustDo(t, h, req{method: http.MethodPut, target: "/alpha/obj", body: "x"})
	expect(t, do(h, req{method: http.MethodDelete, target: "/alpha"}), http.StatusConflict, "BucketNotEmpty")
	mustDo(t, h, req{method: http.MethodDelete, target: "/alpha/obj"})
	expect(t, do(h, req{method: http.MethodDelete, target: "/alpha"}), http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodDelete, target: "/alpha"}), http.StatusNotFound, "NoSuchBucket")
	if _, err := be.HeadBucket(t.Context(), "alpha"); err == nil {
		t.Error("alpha still exists")
	}
}

func TestCreateBucketConfiguration(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	cfg := func(region string) string {
		return `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` +
			region + `</LocationConstraint></CreateBucketConfiguration>`
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/two", body: cfg("")})
	mustDo(t, h, req{method: http.MethodPut, target: "/three", body: "  \n"})

	before := be.mutations()
	for _, c := range []struct {
		body, code string
	}{
		{cfg("eu-west-1"), "InvalidLocationConstraint"},
		// us-east-1 is the empty constraint; S3 refuses it spelt out.
		{cfg("us-east-1"), "InvalidLocationConstraint"},
		{"<CreateBucketConfiguration><LocationConstraint>", "MalformedXML"},
		{"not xml at all", "MalformedXML"},
		{"<Other/>", "MalformedXML"},
	} {
		expect(t, do(h, req{method: http.MethodPut, target: "/four", body: c.body}), http.StatusBadRequest, c.code)
	}
	expect(t, do(h, req{method: http.MethodPut, target: "/four", header: map[string]string{"X-Amz-Bucket-Object-Lock-Enabled": "true"}}),
		http.StatusNotImplemented, "NotImplemented")
	if be.mutations() != before {
		t.Error("rejected CreateBucket changed the backend")
	}
}

func TestCreateBucketBodyLimit(t *testing.T) {
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.Nop(), MaxBodySize: 64})
	if err != nil {
		t.Fatal(err)
	}
	body := "<CreateBucketConfiguration><LocationConstraint>" + strings.Repeat(" ", 100) + "</LocationConstraint></CreateBucketConfiguration>"
	expect(t, do(h, req{method: http.MethodPut, target: "/big", body: body}), http.StatusBadRequest, "MaxMessageLengthExceeded")
}

func TestBucketLocationAndVersioning(t *testing.T) {
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.Nop(), Region: "eu-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
	// Outside us-east-1, re-creating your own bucket is a conflict.
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt"}), http.StatusConflict, "BucketAlreadyOwnedByYou")
	var loc locationConstraint
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?location"}), &loc)
	if loc.Location != "eu-central-1" {
		t.Errorf("location %q", loc.Location)
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/nope?location"}), http.StatusNotFound, "NoSuchBucket")

	rec := mustDo(t, h, req{method: http.MethodGet, target: "/bkt?versioning"})
	var v versioningConfiguration
	decodeXML(t, rec, &v)
	if strings.Contains(rec.Body.String(), "<Status>") {
		t.Errorf("versioning reports a status: %s", rec.Body.String())
	}

	_, h2 := newTestGateway(t, allowAll{})
	mustDo(t, h2, req{method: http.MethodPut, target: "/bkt"})
	rec = mustDo(t, h2, req{method: http.MethodGet, target: "/bkt?location"})
	decodeXML(t, rec, &loc)
	// S3 reports us-east-1 as an empty LocationConstraint element.
	if loc.Location != "" || !strings.Contains(rec.Body.String(), `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></LocationConstraint>`) {
		t.Errorf("us-east-1 location %q: %s", loc.Location, rec.Body.String())
	}
}

func TestUnimplementedSubresources(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	before := be.mutations()
	for _, rq := range []req{
		{method: http.MethodGet, target: "/bkt?acl"},
		{method: http.MethodPut, target: "/bkt?acl"},
		{method: http.MethodGet, target: "/bkt?policy"},
		{method: http.MethodDelete, target: "/bkt?policy"},
		{method: http.MethodPut, target: "/bkt?lifecycle"},
		{method: http.MethodPut, target: "/bkt?versioning"},
		{method: http.MethodGet, target: "/bkt?tagging"},
		{method: http.MethodDelete, target: "/bkt?cors"},
		{method: http.MethodGet, target: "/bkt?uploads"},
		{method: http.MethodPost, target: "/bkt"},
		{method: http.MethodGet, target: "/bkt/k?acl"},
		{method: http.MethodPost, target: "/bkt/k?restore"},
		{method: http.MethodGet, target: "/bkt/k?torrent"},
		{method: http.MethodPut, target: "/bkt/k2", body: "x", header: map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}},
		{method: http.MethodPut, target: "/bkt/k2", body: "x", header: map[string]string{"If-None-Match": `"abc"`}},
	} {
		rec := do(h, rq)
		if rec.Code != http.StatusNotImplemented || errorCode(t, rec) != "NotImplemented" {
			t.Errorf("%s %s: %d %s", rq.method, rq.target, rec.Code, rec.Body.String())
		}
	}
	if be.mutations() != before {
		t.Error("unimplemented requests changed the backend")
	}
	// Unknown query parameters (SDKs add x-id) do not change the operation.
	mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?x-id=GetObject"})
}

func TestCommonResponseHeaders(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	for _, rq := range []req{
		{method: http.MethodGet, target: "/"},
		{method: http.MethodGet, target: "/missing/key"},
		{method: http.MethodHead, target: "/missing"},
		{method: http.MethodPost, target: "/"},
	} {
		rec := do(h, rq)
		if rec.Header().Get("X-Amz-Request-Id") == "" || rec.Header().Get("X-Amz-Id-2") == "" {
			t.Errorf("%s %s: missing request ids: %v", rq.method, rq.target, rec.Header())
		}
		if rec.Header().Get("Server") != "tessera" {
			t.Errorf("%s %s: Server %q", rq.method, rq.target, rec.Header().Get("Server"))
		}
	}
	rec := do(h, req{method: http.MethodGet, target: "/missing/key"})
	var e errorResponse
	decodeXML(t, rec, &e)
	if e.RequestID != rec.Header().Get("X-Amz-Request-Id") || e.Resource != "/missing/key" || e.Message == "" {
		t.Errorf("error body %+v", e)
	}
	expect(t, do(h, req{method: http.MethodPost, target: "/"}), http.StatusMethodNotAllowed, "MethodNotAllowed")
	expect(t, do(h, req{method: http.MethodPatch, target: "/bkt/key"}), http.StatusMethodNotAllowed, "MethodNotAllowed")
}
