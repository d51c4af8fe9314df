package gateway

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPutGetHeaderRoundTrip(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	hdr := map[string]string{
		"Content-Type":        "text/plain; charset=utf-8",
		"Cache-Control":       "max-age=60",
		"Content-Disposition": `attachment; filename="a.txt"`,
		"Content-Encoding":    "aws-chunked,gzip",
		"Content-Language":    "de",
		"Expires":             "Wed, 21 Oct 2015 07:28:00 GMT",
		"X-Amz-Meta-Color":    "blue",
		"X-Amz-Meta-Two-Word": "a b",
		"X-Amz-Storage-Class": "COLD",
	}
	rec := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/doc.txt", body: "hello world", header: hdr})
	sum := md5.Sum([]byte("hello world"))
	wantETag := `"5eb63bbbe01eeed093cb22bb8f5acdc3"`
	if got := rec.Header().Get("ETag"); got != wantETag {
		t.Fatalf("PUT ETag %q, want %q (md5 %x)", got, wantETag, sum)
	}
	info, _, _ := be.object("bkt", "doc.txt")
	if info.UserMeta["color"] != "blue" || info.UserMeta["two-word"] != "a b" || len(info.UserMeta) != 2 {
		t.Errorf("stored user meta %v", info.UserMeta)
	}
	if info.Headers["Content-Encoding"] != "gzip" {
		t.Errorf("stored Content-Encoding %q, want aws-chunked stripped", info.Headers["Content-Encoding"])
	}

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec = mustDo(t, h, req{method: method, target: "/bkt/doc.txt"})
		got := rec.Header()
		want := map[string]string{
			"ETag": wantETag, "Content-Length": "11", "Accept-Ranges": "bytes",
			"Last-Modified": info.ModTime.UTC().Format(http.TimeFormat), "Content-Type": hdr["Content-Type"],
			"Cache-Control": hdr["Cache-Control"], "Content-Disposition": hdr["Content-Disposition"],
			"Content-Encoding": "gzip", "Content-Language": "de", "Expires": hdr["Expires"],
			"X-Amz-Storage-Class": "COLD",
		}
		for k, v := range map[string]string{"color": "blue", "two-word": "a b"} {
			if metaHeader(got, k) != v {
				t.Errorf("%s x-amz-meta-%s = %q, want %q", method, k, metaHeader(got, k), v)
			}
		}
		for k, v := range want {
			if got.Get(k) != v {
				t.Errorf("%s %s = %q, want %q", method, k, got.Get(k), v)
			}
		}
		wantBody := "hello world"
		if method == http.MethodHead {
			wantBody = ""
		}
		if rec.Body.String() != wantBody {
			t.Errorf("%s body %q", method, rec.Body.String())
		}
	}

	// Defaults: no Content-Type stored means binary/octet-stream, and
	// STANDARD is not announced.
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/plain", body: "x"})
	rec = mustDo(t, h, req{method: http.MethodGet, target: "/bkt/plain"})
	if ct := rec.Header().Get("Content-Type"); ct != "binary/octet-stream" {
		t.Errorf("default Content-Type %q", ct)
	}
	if sc, ok := rec.Header()["X-Amz-Storage-Class"]; ok {
		t.Errorf("STANDARD object announces storage class %v", sc)
	}
}

func TestResponseOverrides(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	rec := mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?response-content-type=text%2Fcsv&response-content-disposition=inline"})
	if rec.Header().Get("Content-Type") != "text/csv" || rec.Header().Get("Content-Disposition") != "inline" {
		t.Errorf("overrides not applied: %v", rec.Header())
	}
}

func TestUserMetadataLimit(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	// name "m" (1 byte) + value: exactly 2048 bytes is allowed, 2049 is not.
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/ok", body: "x",
		header: map[string]string{"X-Amz-Meta-M": strings.Repeat("v", 2047)}})
	before := be.mutations()
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/big", body: "x",
		header: map[string]string{"X-Amz-Meta-M": strings.Repeat("v", 2048)}}), http.StatusBadRequest, "MetadataTooLarge")
	expect(t, do(h, req{method: http.MethodPost, target: "/bkt/big?uploads",
		header: map[string]string{"X-Amz-Meta-M": strings.Repeat("v", 2048)}}), http.StatusBadRequest, "MetadataTooLarge")
	if be.mutations() != before {
		t.Error("rejected PUT changed the backend")
	}
}

func TestContentMD5(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	sum := md5.Sum([]byte("payload"))
	good := base64.StdEncoding.EncodeToString(sum[:])
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/a", body: "payload", header: map[string]string{"Content-MD5": good}})
	// S3 reports the digest it computed in base64, the stated one in hex.
	other := md5.Sum([]byte("payloaX"))
	expectElems(t, do(h, req{method: http.MethodPut, target: "/bkt/b", body: "payloaX", header: map[string]string{"Content-MD5": good}}),
		http.StatusBadRequest, map[string]string{
			"Code": "BadDigest", "Message": "The Content-MD5 you specified did not match what we received.",
			"CalculatedDigest": base64.StdEncoding.EncodeToString(other[:]), "ExpectedDigest": hex.EncodeToString(sum[:]),
		})
	for _, bad := range []string{"", "!!!", "AAAA", base64.StdEncoding.EncodeToString(make([]byte, 20))} {
		expectElems(t, do(h, req{method: http.MethodPut, target: "/bkt/c", body: "payload", header: map[string]string{"Content-MD5": bad}}),
			http.StatusBadRequest, map[string]string{
				"Code": "InvalidDigest", "Message": "The Content-Md5 you specified is not valid.", "Content-MD5": bad,
			})
	}
	if _, _, ok := be.object("bkt", "b"); ok {
		t.Error("object with bad digest was stored")
	}
}

func TestPutBodySize(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	before := be.mutations()

	// An aws-chunked body must declare its decoded length.
	r := httptest.NewRequest(http.MethodPut, "/bkt/streaming", strings.NewReader("abc"))
	r.ContentLength = -1
	r.TransferEncoding = []string{"chunked"}
	r.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	expect(t, rec, http.StatusLengthRequired, "MissingContentLength")

	r = httptest.NewRequest(http.MethodPut, "/bkt/huge", strings.NewReader("abc"))
	r.ContentLength = 5<<30 + 1
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	expect(t, rec, http.StatusBadRequest, "EntityTooLarge")

	// Declared longer than sent: the body ends early.
	r = httptest.NewRequest(http.MethodPut, "/bkt/short", strings.NewReader("abc"))
	r.ContentLength = 10
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	expect(t, rec, http.StatusBadRequest, "IncompleteBody")

	if be.mutations() != before {
		t.Error("rejected PUTs changed the backend")
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/empty", body: ""})
	rec = mustDo(t, h, req{method: http.MethodGet, target: "/bkt/empty"})
	if rec.Header().Get("Content-Length") != "0" || rec.Body.Len() != 0 {
		t.Errorf("empty object: %v %q", rec.Header(), rec.Body.String())
	}
}

func TestRangeGet(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "0123456789"})
	cases := []rangeCase{
		{"bytes=2-5", "2345", "bytes 2-5/10", http.StatusPartialContent},
		{"bytes=7-", "789", "bytes 7-9/10", http.StatusPartialContent},
		{"bytes=-3", "789", "bytes 7-9/10", http.StatusPartialContent},
		{"bytes=5-100", "56789", "bytes 5-9/10", http.StatusPartialContent},
		{"bytes=0-1,4-5", "0123456789", "", http.StatusOK},
		{"bytes=5-2", "0123456789", "", http.StatusOK},
		{"garbage", "0123456789", "", http.StatusOK},
		{"bytes=00-01", "01", "bytes 0-1/10", http.StatusPartialContent},
		{"bytes= -1", "0123456789", "", http.StatusOK},
		{"bytes=0 -1", "0123456789", "", http.StatusOK},
		{"bytes=--1", "0123456789", "", http.StatusOK},
		{"bytes=0--1", "0123456789", "", http.StatusOK},
		{"bytes=,", "0123456789", "", http.StatusOK},
		{"foo=0-1", "0123456789", "", http.StatusOK},
		{"bytes=10-", "", "bytes */10", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=10-12", "", "bytes */10", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=-0", "", "bytes */10", http.StatusRequestedRangeNotSatisfiable},
	}
	checkRanges(t, h, "/bkt/k", cases)
}

// A Range on a 0-byte object: a suffix range gets the (empty) whole
// object with 200, as do ignored ranges; any other range selects no byte.
func TestRangeGetEmptyObject(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"empty": ""})
	checkRanges(t, h, "/bkt/empty", []rangeCase{
		{"bytes=-1", "", "", http.StatusOK},
		{"bytes=-100", "", "", http.StatusOK},
		{"bytes=abc", "", "", http.StatusOK},
		{"bytes=0-0,1-2", "", "", http.StatusOK},
		{"bytes= -1", "", "", http.StatusOK},
		{"bytes=0-", "", "bytes */0", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=0-0", "", "bytes */0", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=00-01", "", "bytes */0", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=-0", "", "bytes */0", http.StatusRequestedRangeNotSatisfiable},
	})
}

type rangeCase struct {
	rng, body, contentRange string
	status                  int
}

func checkRanges(t *testing.T, h http.Handler, target string, cases []rangeCase) {
	t.Helper()
	for _, c := range cases {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := do(h, req{method: method, target: target, header: map[string]string{"Range": c.rng}})
			if rec.Code != c.status || rec.Header().Get("Content-Range") != c.contentRange {
				t.Errorf("%s %q: %d Content-Range %q; want %d %q", method, c.rng, rec.Code, rec.Header().Get("Content-Range"), c.status, c.contentRange)
				continue
			}
			if c.status == http.StatusRequestedRangeNotSatisfiable {
				if method == http.MethodGet {
					expectElems(t, rec, c.status, map[string]string{
						"Code": "InvalidRange", "Message": "The requested range is not satisfiable",
						"RangeRequested": c.rng, "ActualObjectSize": strings.TrimPrefix(c.contentRange, "bytes */"),
					})
				}
				continue
			}
			if method == http.MethodGet && rec.Body.String() != c.body {
				t.Errorf("GET %q body %q, want %q", c.rng, rec.Body.String(), c.body)
			}
			if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(c.body)) {
				t.Errorf("%s %q Content-Length %s, want %d", method, c.rng, got, len(c.body))
			}
		}
	}
}

func TestConditionalGet(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	info, _, _ := be.object("bkt", "k")
	etag := quoteETag(info.ETag)
	before := info.ModTime.Add(-time.Hour).Format(http.TimeFormat)
	after := info.ModTime.Add(time.Hour).Format(http.TimeFormat)
	same := info.ModTime.Format(http.TimeFormat)
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"if-match hit", map[string]string{"If-Match": etag}, 200},
		{"if-match unquoted", map[string]string{"If-Match": info.ETag}, 200},
		{"if-match list", map[string]string{"If-Match": `"other", ` + etag}, 200},
		{"if-match star", map[string]string{"If-Match": "*"}, 200},
		{"if-match miss", map[string]string{"If-Match": `"other"`}, 412},
		{"if-none-match hit", map[string]string{"If-None-Match": etag}, 304},
		{"if-none-match star", map[string]string{"If-None-Match": "*"}, 304},
		{"if-none-match miss", map[string]string{"If-None-Match": `"other"`}, 200},
		{"if-modified-since before", map[string]string{"If-Modified-Since": before}, 200},
		{"if-modified-since same", map[string]string{"If-Modified-Since": same}, 304},
		{"if-modified-since after", map[string]string{"If-Modified-Since": after}, 304},
		{"if-modified-since garbage", map[string]string{"If-Modified-Since": "yesterday"}, 200},
		{"if-unmodified-since after", map[string]string{"If-Unmodified-Since": after}, 200},
		{"if-unmodified-since before", map[string]string{"If-Unmodified-Since": before}, 412},
		// If-Match outranks If-Unmodified-Since, If-None-Match outranks If-Modified-Since.
		{"match and unmodified-since false", map[string]string{"If-Match": etag, "If-Unmodified-Since": before}, 200},
		{"none-match miss and modified-since false", map[string]string{"If-None-Match": `"other"`, "If-Modified-Since": after}, 200},
		{"none-match hit and modified-since true", map[string]string{"If-None-Match": etag, "If-Modified-Since": before}, 304},
		{"if-match miss beats none-match", map[string]string{"If-Match": `"x"`, "If-None-Match": etag}, 412},
	}
	for _, c := range cases {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := do(h, req{method: method, target: "/bkt/k", header: c.hdr})
			if rec.Code != c.status {
				t.Errorf("%s %s: status %d, want %d", method, c.name, rec.Code, c.status)
				continue
			}
			switch c.status {
			case 304:
				if rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag {
					t.Errorf("%s %s: 304 with body %q, ETag %q", method, c.name, rec.Body.String(), rec.Header().Get("ETag"))
				}
			case 412:
				if method == http.MethodGet && errorCode(t, rec) != "PreconditionFailed" {
					t.Errorf("%s: code %q", c.name, errorCode(t, rec))
				}
			}
		}
	}
}

func TestVersionIDQuery(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?versionId=null"})
	// Not a version ID at all: InvalidArgument; another store's (a UUID):
	// a version that does not exist, whose delete deletes nothing.
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=not_an_id"}), http.StatusBadRequest, "InvalidArgument")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k?versionId=../k"}), http.StatusBadRequest, "InvalidArgument")
	const uuid = "5f0c7a4e-2b1d-4c8e-9f3a-6d2b1c0e9a77"
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=" + uuid}), http.StatusNotFound, "NoSuchVersion")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k?versionId=" + uuid}), http.StatusNoContent, "")
	if _, _, ok := be.object("bkt", "k"); !ok {
		t.Error("DELETE with a bogus versionId deleted the object")
	}
}

func TestDeleteObject(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k"}), http.StatusNoContent, "")
	if _, _, ok := be.object("bkt", "k"); ok {
		t.Error("object survived DELETE")
	}
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k"}), http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodDelete, target: "/nobkt/k"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k"}), http.StatusNotFound, "NoSuchKey")
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt/k"}), http.StatusNotFound, "NoSuchBucket")
}

// TestGetAbortsMidStream: once the header is out, a failing body must not
// end as a clean, short response.
func TestGetAbortsMidStream(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	// Large enough that the header and some body leave the server's buffer
	// before the failure.
	const size = 256 << 10
	setup(t, h, "bkt", map[string]string{"k": strings.Repeat("z", size)})
	be.getFailAfter = size / 2
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL + "/bkt/k")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != size {
		t.Fatalf("status %d length %d", resp.StatusCode, resp.ContentLength)
	}
	data, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("short body of %d bytes read without error", len(data))
	}
	if len(data) >= size {
		t.Fatalf("read %d bytes", len(data))
	}
}
