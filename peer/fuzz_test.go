package peer

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tessera/meta"
	"tessera/storage"
)

var fuzzMethods = []string{"GET", "PUT", "POST", "DELETE", "HEAD", "PATCH"}

func fuzzSeeds(f *testing.F) {
	rec := func(v any, inline []byte) []byte { b, _ := meta.Marshal(v, inline); return b }
	obj := func(bucket, key string) *meta.Object {
		return &meta.Object{Bucket: bucket, Key: key, Stamp: stamp(1, "w"), Inlined: true}
	}
	seeds := []struct {
		method      uint8
		path, query string
		body        []byte
	}{
		{0, pathBuckets, "", nil},
		{1, pathBucket, "bucket=abc", rec(&meta.Bucket{Name: "abc"}, nil)},
		{1, pathBucket, "bucket=..%2Fx", rec(&meta.Bucket{Name: "../x"}, nil)},
		{1, pathBucket, "bucket=abc", rec(&meta.Bucket{Name: "../x"}, nil)},
		{0, pathBucket, "bucket=bkt", nil},
		{3, pathBucket, "bucket=bkt&bucket=abc", nil},
		{2, pathStage, "", []byte("shard bytes")},
		{2, pathCommit, "bucket=bkt&key=k", rec(&commitRequest{Object: obj("bkt", "k")}, []byte("x"))},
		{2, pathCommit, "bucket=bkt&key=..%2F..%2Fx", rec(&commitRequest{Object: obj("bkt", "../../x")}, nil)},
		{2, pathCommit, "bucket=bkt&key=k", rec(&commitRequest{Object: obj("../bkt", "k")}, nil)},
		{2, pathCommit, "bucket=bkt&key=k", rec(&commitRequest{Object: &meta.Object{Bucket: "bkt", Key: "k",
			Stamp: stamp(2, "../../w"), Parts: []meta.Part{{Number: 1}}}, Staged: []string{"../../../etc/passwd"}}, nil)},
		{2, pathCommit, "bucket=bkt&key=k", rec(&commitRequest{}, nil)},
		{0, pathMeta, "bucket=bkt&key=k", nil},
		{0, pathVersions, "bucket=bkt&key=k", nil},
		{2, pathSettle, "bucket=bkt&key=k&nanos=1&writer=w", nil},
		{2, pathSettle, "bucket=bkt&key=..%2F&nanos=-1&writer=%FF", nil},
		{0, pathShard, "bucket=bkt&key=k&nanos=1&writer=..%2F..&part=1&offset=0&length=-1", nil},
		{0, pathShard, "bucket=bkt&key=k&nanos=x&part=99999999999999999999", nil},
		{0, pathList, "bucket=bkt&prefix=%FF&after=&limit=-3", nil},
		{0, pathList, "bucket=bkt&prefix=a&after=a%2F&limit=5&delimiter=%2F", nil},
		{0, pathTombstones, "bucket=bkt&before=99&after-nanos=3&after=k%00&limit=2", nil},
		{0, pathTombstones, "bucket=bkt&before=-1&after-nanos=x&limit=-3", nil},
		{1, pathUpload, "bucket=bkt&key=k&upload=u1", rec(&meta.Upload{Bucket: "bkt", Key: "k", UploadID: "u1"}, nil)},
		{1, pathUpload, "bucket=bkt&key=k&upload=..", rec(&meta.Upload{Bucket: "bkt", Key: "k", UploadID: ".."}, nil)},
		{0, pathUpload, "bucket=bkt&key=k&upload=u1", nil},
		{2, pathPart, "bucket=bkt&key=k&upload=u1&tmp=..%2F..%2Fx", rec(&meta.Part{Number: 1}, nil)},
		{2, pathPart, "bucket=bkt&key=k&upload=u1&tmp=6f1c2a3e-0000-4000-8000-000000000000", []byte("junk")},
		{2, pathComplete, "bucket=bkt&key=k&upload=u1", rec(&meta.Object{Bucket: "bkt", Key: "k", Stamp: stamp(3, "w"),
			Parts: []meta.Part{{Number: 1}}}, nil)},
		{3, pathUpload, "bucket=bkt&key=k&upload=u1", nil},
		{0, "/v1/../../etc/passwd", "", nil},
		{0, "", "%zz", nil},
		{3, pathBucket, "bucket=bkt", nil},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.body)
	}
}

// FuzzHandler sends arbitrary authenticated requests to a server over a
// real store. Nothing may panic, authentication must hold for any path and
// query, no internal error may surface, and nothing may be created
// outside the data dir or under a name the store would not accept.
func FuzzHandler(f *testing.F) {
	fuzzSeeds(f)
	root := f.TempDir()
	dir := filepath.Join(root, "data")
	st, err := storage.Open(dir, storage.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	if err := st.MakeBucket(ctx, meta.Bucket{Name: "bkt"}); err != nil {
		f.Fatal(err)
	}
	h := NewServer(ServerConfig{Store: st, Secret: secret})
	key := deriveKey(secret)
	f.Fuzz(func(t *testing.T, method uint8, path, rawQuery string, body []byte) {
		req := &http.Request{
			Method: fuzzMethods[int(method)%len(fuzzMethods)], URL: &url.URL{Path: path, RawQuery: rawQuery},
			Header: http.Header{}, Host: "peer", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), RemoteAddr: "127.0.0.1:1",
		}
		req = req.WithContext(ctx)
		if err := sign(req, key, time.Now()); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %q ?%q: status %d: %s", req.Method, path, rawQuery, rec.Code, rec.Body.String())
		}
		checkConfined(t, root, dir)
	})
}

func checkConfined(t *testing.T, root, dir string) {
	t.Helper()
	names := func(p string) []string {
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(root); len(got) != 1 || got[0] != "data" {
		t.Fatalf("entries beside the data dir: %q", got)
	}
	for _, n := range names(dir) {
		if n != ".tmp" && n != "buckets" && n != "index" {
			t.Fatalf("stray entry in data dir: %q", n)
		}
	}
	for _, n := range names(filepath.Join(dir, "buckets")) {
		if !storage.ValidBucket(n) {
			t.Fatalf("bucket dir with invalid name: %q", n)
		}
	}
}
