package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestObjectTagging(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k", body: "data",
		header: map[string]string{"X-Amz-Tagging": "b=2&a=1", "X-Amz-Meta-Keep": "me"}})
	var tg tagging
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?tagging"}), &tg)
	if len(tg.TagSet.Tags) != 2 || tg.TagSet.Tags[0] != (tag{"a", "1"}) || tg.TagSet.Tags[1] != (tag{"b", "2"}) {
		t.Fatalf("tags from x-amz-tagging: %+v", tg.TagSet.Tags)
	}
	rec := mustDo(t, h, req{method: http.MethodHead, target: "/bkt/k"})
	if rec.Header().Get("X-Amz-Tagging-Count") != "2" || rec.Header().Get(tagsHeader) != "" {
		t.Fatalf("HEAD headers %v", rec.Header())
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k?tagging",
		body: `<Tagging><TagSet><Tag><Key>x</Key><Value>y z</Value></Tag></TagSet></Tagging>`})
	tg = tagging{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?tagging"}), &tg)
	if len(tg.TagSet.Tags) != 1 || tg.TagSet.Tags[0] != (tag{"x", "y z"}) {
		t.Fatalf("tags after PutObjectTagging: %+v", tg.TagSet.Tags)
	}
	rec = mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k"})
	if rec.Body.String() != "data" || metaHeader(rec.Header(), "keep") != "me" {
		t.Fatalf("tagging changed the object: %q %v", rec.Body.String(), rec.Header())
	}
	mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/k?tagging"})
	tg = tagging{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?tagging"}), &tg)
	if len(tg.TagSet.Tags) != 0 {
		t.Fatalf("tags after delete: %+v", tg.TagSet.Tags)
	}

	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k?tagging", body: "<Tagging"}), http.StatusBadRequest, "MalformedXML")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/missing?tagging", body: "<Tagging/>"}), http.StatusNotFound, "NoSuchKey")
	dup := `<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>`
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k?tagging", body: dup}), http.StatusBadRequest, "InvalidTag")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k2", body: "x", header: map[string]string{"X-Amz-Tagging": "a=1&a=2"}}),
		http.StatusBadRequest, "InvalidArgument")
}

func TestBucketFromHost(t *testing.T) {
	domains := []string{"s3.example.com", "localhost"}
	cases := map[string]string{
		"bkt.s3.example.com":      "bkt",
		"bkt.s3.example.com:9000": "bkt",
		"BKT.S3.Example.com.":     "bkt",
		"a.b.localhost:1":         "a.b",
		"s3.example.com":          "",
		"localhost:9000":          "",
		"127.0.0.1:9000":          "",
		"bkt.other.com":           "",
		"xs3.example.com":         "",
	}
	for host, want := range cases {
		if got := bucketFromHost(host, domains); got != want {
			t.Errorf("%s: %q, want %q", host, got, want)
		}
	}
}

func TestVirtualHostedRequests(t *testing.T) {
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: allowAll{}, Domains: []string{"s3.test"}})
	if err != nil {
		t.Fatal(err)
	}
	vh := func(method, host, target, body string) *http.Request {
		r := httpRequest(method, target, body)
		r.Host = host
		return r
	}
	for _, r := range []*http.Request{
		vh(http.MethodPut, "bkt.s3.test", "/", ""),
		vh(http.MethodPut, "bkt.s3.test:9000", "/dir/a%20b", "hello"),
	} {
		if rec := serve(h, r); rec.Code != http.StatusOK {
			t.Fatalf("%s %s%s: %d %s", r.Method, r.Host, r.URL, rec.Code, rec.Body.String())
		}
	}
	rec := serve(h, vh(http.MethodGet, "bkt.s3.test", "/dir/a%20b", ""))
	if rec.Code != http.StatusOK || rec.Body.String() != "hello" {
		t.Fatalf("virtual-hosted GET: %d %q", rec.Code, rec.Body.String())
	}
	// Path style still works next to it.
	if rec := serve(h, httpRequest(http.MethodGet, "/bkt/dir/a%20b", "")); rec.Body.String() != "hello" {
		t.Fatalf("path-style GET: %d %q", rec.Code, rec.Body.String())
	}
}

func TestCopySourceRange(t *testing.T) {
	cases := []struct {
		in          string
		off, length int64
		ok          bool
	}{
		{"", 0, 100, true},
		{"bytes=0-99", 0, 100, true},
		{"bytes=10-10", 10, 1, true},
		{"bytes=0-100", 0, 0, false},
		{"bytes=5-4", 0, 0, false},
		{"bytes=-5", 0, 0, false},
		{"bytes=5-", 0, 0, false},
		{"items=0-1", 0, 0, false},
	}
	for _, c := range cases {
		off, length, err := parseCopySourceRange(c.in, 100)
		if (err == nil) != c.ok || (c.ok && (off != c.off || length != c.length)) {
			t.Errorf("%q: %d+%d, %v", c.in, off, length, err)
		}
	}
}

func encodePolicy(doc string) string { return base64.StdEncoding.EncodeToString([]byte(doc)) }

func TestPostPolicyConditions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := `{"expiration":"2026-01-01T01:00:00Z","conditions":[{"bucket":"bkt"},["starts-with","$key","up/"],` +
		`["eq","$Content-Type","text/plain"],["content-length-range",1,10],{"x-amz-meta-a":"1"}]}`
	pol, err := parsePolicy(encodePolicy(doc), now)
	if err != nil {
		t.Fatal(err)
	}
	if pol.minSize != 1 || pol.maxSize != 10 {
		t.Fatalf("size range %d-%d", pol.minSize, pol.maxSize)
	}
	good := map[string]string{"key": "up/x", "content-type": "text/plain", "x-amz-meta-a": "1", "policy": "p", "x-amz-signature": "s"}
	cases := []struct {
		name   string
		bucket string
		key    string
		change map[string]string
		ok     bool
	}{
		{"ok", "bkt", "up/x", nil, true},
		{"wrong bucket", "other", "up/x", nil, false},
		{"key outside prefix", "bkt", "down/x", nil, false},
		{"wrong content type", "bkt", "up/x", map[string]string{"content-type": "text/html"}, false},
		{"extra field", "bkt", "up/x", map[string]string{"x-amz-meta-b": "2"}, false},
		{"ignored field", "bkt", "up/x", map[string]string{"x-ignore-me": "2"}, true},
	}
	for _, c := range cases {
		f := map[string]string{}
		for k, v := range good {
			f[k] = v
		}
		for k, v := range c.change {
			f[k] = v
		}
		if err := pol.check(f, c.bucket, c.key); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for _, bad := range []string{
		"not base64!",
		encodePolicy(`{"expiration":"2025-12-31T00:00:00Z","conditions":[]}`),
		encodePolicy(`{"expiration":"soon","conditions":[]}`),
		encodePolicy(`{"expiration":"2026-01-01T01:00:00Z","conditions":[["regex","$key","x"]]}`),
		encodePolicy(`{"expiration":"2026-01-01T01:00:00Z","conditions":[["content-length-range",5,1]]}`),
		encodePolicy(`[]`),
	} {
		if _, err := parsePolicy(bad, now); err == nil {
			t.Errorf("policy %q accepted", bad)
		}
	}
}

// writeCert writes a self-signed certificate and key named cn into dir.
func writeCert(t *testing.T, dir, cn string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cf, kf := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cf, kf
}

func TestCertReloader(t *testing.T) {
	dir := t.TempDir()
	cf, kf := writeCert(t, dir, "first")
	rl, err := NewCertReloader(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	rl.checkEvery = 0
	commonName := func() string {
		c, err := rl.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if cn := commonName(); cn != "first" {
		t.Fatalf("initial certificate %q", cn)
	}
	writeCert(t, dir, "second")
	// Make the change visible even on coarse file-time clocks.
	later := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(cf, later, later)
	if cn := commonName(); cn != "second" {
		t.Fatalf("after renewal %q", cn)
	}
	// A broken renewal keeps the last good pair.
	if err := os.WriteFile(cf, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(cf, later.Add(time.Second), later.Add(time.Second))
	if cn := commonName(); cn != "second" {
		t.Fatalf("after a broken renewal %q", cn)
	}
	if _, err := NewCertReloader(cf, kf); err == nil {
		t.Fatal("a broken pair loaded")
	}
}
