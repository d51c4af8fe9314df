package gateway

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tessera/meta"
)

func TestValidBucketName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"abc", true},
		{"my-bucket.data-01", true},
		{"a1b", true},
		{strings.Repeat("a", 63), true},
		{"1bucket", true},
		{"ab", false},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Bucket", false},
		{"my_bucket", false},
		{"-bucket", false},
		{"bucket-", false},
		{".bucket", false},
		{"bucket.", false},
		{"my..bucket", false},
		{"192.168.5.4", false},
		{"10.0.0.1", false},
		{"1.2.3", true},
		{"xn--bucket", false},
		{"sthree-bucket", false},
		{"bucket-s3alias", false},
		{"bucket--ol-s3", false},
		{"bucket.mrap", false},
		{"bucket--x-s3", false},
		{"buck%et", false},
		{"buck/et", false},
		{"bücket", false},
	}
	for _, c := range cases {
		if got := validBucketName(c.name); got != c.ok {
			t.Errorf("validBucketName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

func TestInvalidBucketNameRejectedOnEveryRoute(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	for _, rq := range []req{
		{method: http.MethodPut, target: "/Bad_Bucket"},
		{method: http.MethodPut, target: "/ab"},
		{method: http.MethodPut, target: "/192.168.1.1"},
		{method: http.MethodGet, target: "/xn--abc?list-type=2"},
		{method: http.MethodPut, target: "/UPPER/key", body: "x"},
		{method: http.MethodGet, target: "/a..b/key"},
		{method: http.MethodPut, target: "//key", body: "x"},
	} {
		expect(t, do(h, rq), http.StatusBadRequest, "InvalidBucketName")
	}
}

// TestKeyEdgeCases stores keys that path handling commonly breaks and
// reads each back under the same key only.
func TestKeyEdgeCases(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	cases := []struct {
		wire string // escaped path after /bkt/
		key  string // key the backend must see
	}{
		{"a/b", "a/b"},
		{"a%2Fb", "a/b"},
		{"a%252Fb", "a%2Fb"},
		{"a/../b", "a/../b"},
		{"a//b", "a//b"},
		{"./x", "./x"},
		{"dir/", "dir/"},
		{"%E6%97%A5%E6%9C%AC%E8%AA%9E", "日本語"},
		{"space%20and+plus", "space and+plus"},
		{"q%3Fmark%23hash", "q?mark#hash"},
		{strings.Repeat("k", 1024), strings.Repeat("k", 1024)},
	}
	for i, c := range cases {
		body := "v" + string(rune('a'+i))
		mustDo(t, h, req{method: http.MethodPut, target: "/bkt/" + c.wire, body: body})
		_, data, ok := be.object("bkt", c.key)
		if !ok || string(data) != body {
			t.Errorf("PUT /bkt/%s: backend key %q has %q (found %v), want %q", c.wire, c.key, data, ok, body)
		}
		rec := mustDo(t, h, req{method: http.MethodGet, target: "/bkt/" + c.wire})
		if rec.Body.String() != body {
			t.Errorf("GET /bkt/%s = %q, want %q", c.wire, rec.Body.String(), body)
		}
	}
	// "a/b" and "a%2Fb" are the same key; "a%252Fb" is a different one.
	if _, data, _ := be.object("bkt", "a/b"); string(data) != "vb" {
		t.Errorf("a/b holds %q, want the second write", data)
	}
}

func TestKeyRejections(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	before := be.mutations()
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/" + strings.Repeat("k", 1025), body: "x"}),
		http.StatusBadRequest, "KeyTooLongError")
	// 1024 bytes of a 2-byte character is 512 characters but 1024 bytes: fine.
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/" + url.PathEscape(strings.Repeat("é", 512)), body: "x"})
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/" + url.PathEscape(strings.Repeat("é", 513)), body: "x"}),
		http.StatusBadRequest, "KeyTooLongError")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/bad%FF%FEutf8", body: "x"}),
		http.StatusBadRequest, "InvalidArgument")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/bad%C3"}),
		http.StatusBadRequest, "InvalidArgument")
	// NUL separates a stored key from its version ID: no request names
	// a key holding one, so none reaches another key's version.
	version := "k%00" + meta.NewVersionID(1)
	for _, rq := range []req{
		{method: http.MethodPut, target: "/bkt/a%00b", body: "x"},
		{method: http.MethodPut, target: "/bkt/" + version, body: "x"},
		{method: http.MethodGet, target: "/bkt/" + version},
		{method: http.MethodDelete, target: "/bkt/" + version},
		{method: http.MethodPost, target: "/bkt/" + version + "?uploads"},
	} {
		expect(t, do(h, rq), http.StatusBadRequest, "InvalidArgument")
	}
	// Keys whose dot segments leave nothing or climb above the bucket get
	// S3's bare 400 on every write; escaped dots are the same key. Reads
	// and deletes go through, so an object an earlier version stored
	// under such a key can still be removed.
	for _, k := range []string{".", "..", "./", "/.", "//", "../", "/..", "a/..", "../x", "for/../../bar/",
		"/a/../../b", "%2E%2E/x", "a%2F..%2F..%2Fx"} {
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/" + k, body: "x"}), http.StatusBadRequest, "400")
		expect(t, do(h, req{method: http.MethodPost, target: "/bkt/" + k + "?uploads"}), http.StatusBadRequest, "400")
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt/" + k}), http.StatusNotFound, "NoSuchKey")
	}
	if got := be.mutations() - before; got != 1 {
		t.Errorf("%d backend mutations, want 1 (the valid 1024-byte key)", got)
	}
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/../x"}), http.StatusNoContent, "")
}
