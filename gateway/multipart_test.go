package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func createUpload(t *testing.T, h http.Handler, target string, hdr map[string]string) string {
	t.Helper()
	var res initiateMultipartUploadResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: target + "?uploads", header: hdr}), &res)
	if res.UploadID == "" {
		t.Fatal("no UploadId")
	}
	return res.UploadID
}

func completeBody(parts ...string) string {
	var b strings.Builder
	b.WriteString(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for i := 0; i+1 < len(parts); i += 2 {
		fmt.Fprintf(&b, "<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>", parts[i], parts[i+1])
	}
	b.WriteString("</CompleteMultipartUpload>")
	return b.String()
}

func TestMultipartFlow(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	id := createUpload(t, h, "/bkt/big%20file", map[string]string{
		"Content-Type": "video/mp4", "X-Amz-Meta-Owner": "me", "X-Amz-Storage-Class": "COLD",
	})
	var etags []string
	for i, data := range []string{"AAAAAA", "BBBBBB", "CC"} {
		rec := mustDo(t, h, req{method: http.MethodPut, target: fmt.Sprintf("/bkt/big%%20file?partNumber=%d&uploadId=%s", i+1, id), body: data})
		etags = append(etags, rec.Header().Get("ETag"))
	}

	var lp listPartsResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/big%20file?uploadId=" + id + "&max-parts=2"}), &lp)
	if !lp.IsTruncated || len(lp.Parts) != 2 || lp.NextPartNumberMarker != 2 || lp.MaxParts != 2 || lp.StorageClass != "COLD" {
		t.Fatalf("ListParts page 1: %+v", lp)
	}
	if lp.Parts[0].ETag != etags[0] || lp.Parts[0].Size != 6 || lp.Key != "big file" {
		t.Errorf("part 1: %+v key %q", lp.Parts[0], lp.Key)
	}
	lp = listPartsResult{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/big%20file?uploadId=" + id + "&part-number-marker=2"}), &lp)
	if lp.IsTruncated || len(lp.Parts) != 1 || lp.Parts[0].PartNumber != 3 || lp.PartNumberMarker != 2 {
		t.Fatalf("ListParts page 2: %+v", lp)
	}

	// ETags with and without quotes, surrounded by whitespace.
	body := completeBody("1", etags[0], "2", strings.Trim(etags[1], `"`), "3", " "+etags[2]+"\n")
	var cr completeMultipartUploadResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt/big%20file?uploadId=" + id, body: body}), &cr)
	if cr.Key != "big file" || cr.Bucket != "bkt" || !strings.HasSuffix(cr.ETag, `-3"`) || !strings.HasSuffix(cr.Location, "/bkt/big%20file") {
		t.Errorf("complete result %+v", cr)
	}
	rec := mustDo(t, h, req{method: http.MethodGet, target: "/bkt/big%20file"})
	if rec.Body.String() != "AAAAAABBBBBBCC" || rec.Header().Get("ETag") != cr.ETag ||
		rec.Header().Get("Content-Type") != "video/mp4" || metaHeader(rec.Header(), "owner") != "me" {
		t.Errorf("completed object: %q %v", rec.Body.String(), rec.Header())
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/big%20file?uploadId=" + id}), http.StatusNotFound, "NoSuchUpload")
	if _, _, ok := be.object("bkt", "big file"); !ok {
		t.Error("object missing in backend")
	}
}

func TestMultipartErrors(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	id := createUpload(t, h, "/bkt/k", nil)
	part := func(n int, data string) string {
		return mustDo(t, h, req{method: http.MethodPut, target: fmt.Sprintf("/bkt/k?partNumber=%d&uploadId=%s", n, id), body: data}).Header().Get("ETag")
	}
	e1, e2, e3 := part(1, "tiny"), part(2, "123456"), part(3, "end")
	before := be.mutations()

	for _, pn := range []string{"0", "10001", "-1", "abc", ""} {
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k?partNumber=" + pn + "&uploadId=" + id, body: "x"}),
			http.StatusBadRequest, "InvalidArgument")
	}
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k?partNumber=1&uploadId=nope", body: "x"}), http.StatusNotFound, "NoSuchUpload")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/other?partNumber=1&uploadId=" + id, body: "x"}), http.StatusNotFound, "NoSuchUpload")

	r := httptest.NewRequest(http.MethodPut, "/bkt/k?partNumber=4&uploadId="+id, strings.NewReader("x"))
	r.ContentLength = -1
	r.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	expect(t, rec, http.StatusLengthRequired, "MissingContentLength")
	r = httptest.NewRequest(http.MethodPut, "/bkt/k?partNumber=4&uploadId="+id, strings.NewReader("x"))
	r.ContentLength = 5<<30 + 1
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	expect(t, rec, http.StatusBadRequest, "EntityTooLarge")

	completes := []struct {
		name, body string
		status     int
		code       string
	}{
		{"empty body", "", 400, "MalformedXML"},
		{"not xml", "parts please", 400, "MalformedXML"},
		{"truncated xml", "<CompleteMultipartUpload><Part><PartNumber>1", 400, "MalformedXML"},
		{"no parts", "<CompleteMultipartUpload></CompleteMultipartUpload>", 400, "MalformedXML"},
		{"wrong root", "<Delete><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></Delete>", 400, "MalformedXML"},
		{"non-numeric part", completeBody("one", e1), 400, "MalformedXML"},
		{"part zero", completeBody("0", e1), 400, "InvalidArgument"},
		{"negative part", completeBody("-4", e1), 400, "InvalidArgument"},
		{"part too big", completeBody("10001", e1), 400, "InvalidPart"},
		{"no part number", "<CompleteMultipartUpload><Part><ETag>" + e1 + "</ETag></Part></CompleteMultipartUpload>", 400, "MalformedXML"},
		{"no etag", "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>", 400, "MalformedXML"},
		{"duplicate after others", completeBody("1", e1, "2", e2, "2", e2), 400, "InvalidPartOrder"},
		{"descending", completeBody("2", e2, "1", e1), 400, "InvalidPartOrder"},
		{"duplicate", completeBody("1", e1, "1", e1), 400, "InvalidPartOrder"},
		{"missing etag", completeBody("1", ""), 400, "InvalidPart"},
		{"wrong etag", completeBody("1", `"0123"`), 400, "InvalidPart"},
		{"unknown part", completeBody("2", e2, "9", e2), 400, "InvalidPart"},
		{"small middle part", completeBody("1", e1, "2", e2, "3", e3), 400, "EntityTooSmall"},
	}
	for _, c := range completes {
		rec := do(h, req{method: http.MethodPost, target: "/bkt/k?uploadId=" + id, body: c.body})
		if rec.Code != c.status || errorCode(t, rec) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, rec.Code, errorCode(t, rec), c.status, c.code)
		}
	}
	if be.mutations() != before {
		t.Error("rejected requests changed the backend")
	}
	expect(t, do(h, req{method: http.MethodPost, target: "/bkt/k?uploadId=nope", body: completeBody("1", e1)}), http.StatusNotFound, "NoSuchUpload")
	for _, q := range []string{"max-parts=-1", "max-parts=x", "part-number-marker=-2", "part-number-marker=x"} {
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?uploadId=" + id + "&" + q}), http.StatusBadRequest, "InvalidArgument")
	}

	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k?uploadId=" + id}), http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k?uploadId=" + id}), http.StatusNotFound, "NoSuchUpload")
	expect(t, do(h, req{method: http.MethodPost, target: "/nobkt/k?uploads"}), http.StatusNotFound, "NoSuchBucket")
}
