package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rs/zerolog"
)

// minioEnv is a gateway on a real listener driven by minio-go.
type minioEnv struct {
	be   *fakeBackend
	c    *minio.Client
	core *minio.Core            // the low-level API, for multipart by hand
	opts minio.PutObjectOptions // base options for uploads
}

func newMinioEnv(t *testing.T, auth Authenticator, disableSHA bool) *minioEnv {
	t.Helper()
	be := newFakeBackend()
	be.minPartSize = 1 << 10
	h, err := New(Config{Backend: be, Auth: auth, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	c, err := minio.NewCore(strings.TrimPrefix(srv.URL, "http://"), &minio.Options{
		Creds:     credentials.NewStaticV4(testAccessKey, testSecretKey, ""),
		Region:    "us-east-1",
		Transport: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &minioEnv{be: be, c: c.Client, core: c, opts: minio.PutObjectOptions{DisableContentSha256: disableSHA}}
}

// TestMinioClient checks response formats against a real S3 client: once
// with a permissive authenticator and plain bodies, once with the SigV4
// verifier and minio-go's default streaming (aws-chunked) signatures.
func TestMinioClient(t *testing.T) {
	t.Run("permissive", func(t *testing.T) { runMinio(t, newMinioEnv(t, allowAll{}, true)) })
	t.Run("sigv4-streaming", func(t *testing.T) { runMinio(t, newMinioEnv(t, testVerifier(), false)) })
}

func runMinio(t *testing.T, env *minioEnv) {
	ctx := t.Context()
	c := env.c
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.MakeBucket(ctx, "mbkt", minio.MakeBucketOptions{}))
	must(c.MakeBucket(ctx, "mbkt", minio.MakeBucketOptions{})) // us-east-1: 200, as S3
	if ok, err := c.BucketExists(ctx, "mbkt"); !ok || err != nil {
		t.Fatalf("BucketExists = %v, %v", ok, err)
	}
	if ok, err := c.BucketExists(ctx, "nobkt"); ok || err != nil {
		t.Fatalf("BucketExists(nobkt) = %v, %v", ok, err)
	}

	keys := []string{"dir/a b+c.txt", "dir/sub/日本.txt", "top", "pct%2Fkey"}
	for _, k := range keys {
		opts := env.opts
		opts.ContentType = "text/plain"
		opts.UserMetadata = map[string]string{"Color": "red"}
		_, err := c.PutObject(ctx, "mbkt", k, strings.NewReader("content of "+k), int64(len("content of "+k)), opts)
		must(err)
	}
	st, err := c.StatObject(ctx, "mbkt", "dir/a b+c.txt", minio.StatObjectOptions{})
	must(err)
	if st.Size != int64(len("content of dir/a b+c.txt")) || st.ContentType != "text/plain" || st.UserMetadata["Color"] != "red" {
		t.Errorf("StatObject = %+v", st)
	}
	getOpts := minio.GetObjectOptions{}
	must(getOpts.SetRange(2, 5))
	obj, err := c.GetObject(ctx, "mbkt", "pct%2Fkey", getOpts)
	must(err)
	data, err := io.ReadAll(obj)
	must(err)
	obj.Close()
	if string(data) != "ntent"[:4] {
		t.Errorf("range GET = %q", data)
	}

	checkMinioListings(t, c, keys)
	checkMinioCopy(t, env)
	checkMinioMultipart(t, env)

	_, err = c.StatObject(ctx, "mbkt", "missing", minio.StatObjectOptions{})
	wantCode(t, err, "NoSuchKey")
	obj, err = c.GetObject(ctx, "mbkt", "missing", minio.GetObjectOptions{})
	must(err)
	_, err = io.ReadAll(obj)
	wantCode(t, err, "NoSuchKey")
	obj.Close()
	wantCode(t, c.RemoveBucket(ctx, "mbkt"), "BucketNotEmpty")

	objs := make(chan minio.ObjectInfo)
	go func() {
		defer close(objs)
		for o := range c.ListObjects(ctx, "mbkt", minio.ListObjectsOptions{Recursive: true}) {
			objs <- o
		}
	}()
	for e := range c.RemoveObjects(ctx, "mbkt", objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects: %s: %v", e.ObjectName, e.Err)
	}
	must(c.RemoveBucket(ctx, "mbkt"))
	wantCode(t, c.RemoveBucket(ctx, "mbkt"), "NoSuchBucket")
}

func checkMinioListings(t *testing.T, c *minio.Client, keys []string) {
	t.Helper()
	ctx := t.Context()
	want := slices.Sorted(slices.Values(keys))
	for _, v1 := range []bool{false, true} {
		var got []string
		for o := range c.ListObjects(ctx, "mbkt", minio.ListObjectsOptions{Recursive: true, UseV1: v1, MaxKeys: 2}) {
			if o.Err != nil {
				t.Fatalf("list v1=%v: %v", v1, o.Err)
			}
			got = append(got, o.Key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("recursive list v1=%v = %q, want %q", v1, got, want)
		}
		got = nil
		for o := range c.ListObjects(ctx, "mbkt", minio.ListObjectsOptions{Prefix: "dir/", UseV1: v1}) {
			if o.Err != nil {
				t.Fatalf("list v1=%v: %v", v1, o.Err)
			}
			got = append(got, o.Key)
		}
		if !slices.Equal(got, []string{"dir/a b+c.txt", "dir/sub/"}) {
			t.Errorf("delimited list v1=%v = %q", v1, got)
		}
	}
}

func checkMinioCopy(t *testing.T, env *minioEnv) {
	t.Helper()
	ctx := t.Context()
	_, err := env.c.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: "mbkt", Object: "copy/of 日本", ReplaceMetadata: true, UserMetadata: map[string]string{"Shape": "round"}},
		minio.CopySrcOptions{Bucket: "mbkt", Object: "dir/sub/日本.txt"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.c.StatObject(ctx, "mbkt", "copy/of 日本", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.UserMetadata["Shape"] != "round" || st.UserMetadata["Color"] != "" || st.Size != int64(len("content of dir/sub/日本.txt")) {
		t.Errorf("copy: %+v", st)
	}
	_, err = env.c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "mbkt", Object: "top"}, minio.CopySrcOptions{Bucket: "mbkt", Object: "top"})
	wantCode(t, err, "InvalidRequest")
	if err := env.c.RemoveObject(ctx, "mbkt", "copy/of 日本", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

func checkMinioMultipart(t *testing.T, env *minioEnv) {
	t.Helper()
	ctx := t.Context()
	c := env.core
	id, err := c.NewMultipartUpload(ctx, "mbkt", "multi", env.opts)
	if err != nil {
		t.Fatal(err)
	}
	partData := [][]byte{bytes.Repeat([]byte("a"), 2<<10), bytes.Repeat([]byte("b"), 2<<10), []byte("tail")}
	var parts []minio.CompletePart
	for i, d := range partData {
		p, err := c.PutObjectPart(ctx, "mbkt", "multi", id, i+1, bytes.NewReader(d), int64(len(d)),
			minio.PutObjectPartOptions{DisableContentSha256: env.opts.DisableContentSha256})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag})
	}
	lp, err := c.ListObjectParts(ctx, "mbkt", "multi", id, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.ObjectParts) != 2 || !lp.IsTruncated || lp.NextPartNumberMarker != 2 {
		t.Errorf("ListObjectParts = %+v", lp)
	}
	_, err = c.CompleteMultipartUpload(ctx, "mbkt", "multi", "bogus-upload", parts, minio.PutObjectOptions{})
	wantCode(t, err, "NoSuchUpload")
	info, err := c.CompleteMultipartUpload(ctx, "mbkt", "multi", id, parts, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("multipart ETag %q", info.ETag)
	}
	obj, err := env.c.GetObject(ctx, "mbkt", "multi", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, bytes.Join(partData, nil)) {
		t.Errorf("multipart object: %d bytes, %v", len(got), err)
	}

	// minio-go's own multipart path: parts uploaded in parallel.
	big := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16+10)
	opts := env.opts
	opts.PartSize = 5 << 20
	up, err := env.c.PutObject(ctx, "mbkt", "big", bytes.NewReader(big), int64(len(big)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(up.ETag, "-2") {
		t.Errorf("big object ETag %q, want 2 parts", up.ETag)
	}
	if _, data, _ := env.be.object("mbkt", "big"); !bytes.Equal(data, big) {
		t.Errorf("big object stored %d bytes, want %d", len(data), len(big))
	}

	id2, err := c.NewMultipartUpload(ctx, "mbkt", "aborted", env.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AbortMultipartUpload(ctx, "mbkt", "aborted", id2); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.AbortMultipartUpload(context.WithoutCancel(ctx), "mbkt", "aborted", id2), "NoSuchUpload")
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := minio.ToErrorResponse(err).Code; got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}
