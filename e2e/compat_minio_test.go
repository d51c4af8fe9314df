package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"

	"tessera/server"
)

// TestCompatMinio drives minio-go over https with virtual-hosted-style
// requests, and over http path style, through tagging, upload listing,
// server-side compose (UploadPartCopy), copy with REPLACE and browser POST.
func TestCompatMinio(t *testing.T) {
	t.Run("https-virtual-host", func(t *testing.T) {
		c, pool := tlsServer(t, func(cfg *server.EmbeddedConfig) { cfg.Domains = []string{"localhost"} })
		port := c.srv.S3Addr()[strings.LastIndex(c.srv.S3Addr(), ":"):]
		compatMinio(t, minioClient(t, c, "localhost"+port, pool, minio.BucketLookupDNS), c, pool)
	})
	t.Run("http-path-style", func(t *testing.T) {
		c := startServer(t)
		compatMinio(t, minioClient(t, c, c.srv.S3Addr(), nil, minio.BucketLookupPath), c, nil)
	})
}

func compatMinio(t *testing.T, mc *minio.Client, c *cluster, pool *x509.CertPool) {
	ctx := context.Background()
	if err := mc.MakeBucket(ctx, "mcompat", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	src := payload(31, 6<<20)
	if _, err := mc.PutObject(ctx, "mcompat", "src", bytes.NewReader(src), int64(len(src)),
		minio.PutObjectOptions{UserTags: map[string]string{"team": "blue"}, SendContentMd5: true}); err != nil {
		t.Fatalf("put: %v", err)
	}
	tg, err := mc.GetObjectTagging(ctx, "mcompat", "src", minio.GetObjectTaggingOptions{})
	if err != nil || tg.ToMap()["team"] != "blue" {
		t.Fatalf("tags from PUT: %v %v", err, tg)
	}
	nt, _ := tags.NewTags(map[string]string{"x": "y"}, true)
	if err := mc.PutObjectTagging(ctx, "mcompat", "src", nt, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatalf("put tagging: %v", err)
	}
	if tg, err := mc.GetObjectTagging(ctx, "mcompat", "src", minio.GetObjectTaggingOptions{}); err != nil || tg.String() != "x=y" {
		t.Fatalf("tags after put: %v %v", err, tg)
	}

	// ComposeObject copies server-side with UploadPartCopy.
	dst := minio.CopyDestOptions{Bucket: "mcompat", Object: "composed", ReplaceMetadata: true, UserMetadata: map[string]string{"Kind": "composed"}}
	_, err = mc.ComposeObject(ctx, dst,
		minio.CopySrcOptions{Bucket: "mcompat", Object: "src", MatchRange: true, Start: 0, End: 5<<20 - 1},
		minio.CopySrcOptions{Bucket: "mcompat", Object: "src", MatchRange: true, Start: 10, End: 19})
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	obj, err := mc.GetObject(ctx, "mcompat", "composed", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	want := append(append([]byte{}, src[:5<<20]...), src[10:20]...)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("composed object differs: %v (%d bytes)", err, len(got))
	}

	// Incomplete uploads are listed until aborted.
	core := minio.Core{Client: mc}
	id, err := core.NewMultipartUpload(ctx, "mcompat", "pending/one", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for u := range mc.ListIncompleteUploads(ctx, "mcompat", "pending/", true) {
		if u.Err != nil {
			t.Fatalf("list incomplete: %v", u.Err)
		}
		found = append(found, u.Key+"/"+u.UploadID)
	}
	if len(found) != 1 || found[0] != "pending/one/"+id {
		t.Fatalf("incomplete uploads %v, want the one of id %s", found, id)
	}
	if err := mc.RemoveIncompleteUpload(ctx, "mcompat", "pending/one"); err != nil {
		t.Fatalf("remove incomplete: %v", err)
	}

	compatMinioPost(t, mc, c, pool)
	compatMinioV2(t, c, pool)
}

// compatMinioPost uploads through a presigned POST policy as a browser
// form would, and checks that a form breaking the policy stores nothing.
func compatMinioPost(t *testing.T, mc *minio.Client, c *cluster, pool *x509.CertPool) {
	ctx := context.Background()
	hc := &http.Client{Transport: loopbackTransport(t, c.srv.S3Addr(), pool)}
	post := func(key, content string, sum ...minio.Checksum) int {
		p := minio.NewPostPolicy()
		_ = p.SetBucket("mcompat")
		_ = p.SetKey(key)
		_ = p.SetExpires(time.Now().Add(5 * time.Minute))
		_ = p.SetContentLengthRange(1, 16)
		for _, c := range sum {
			_ = p.SetChecksum(c)
		}
		u, form, err := mc.PresignedPostPolicy(ctx, p)
		if err != nil {
			t.Fatalf("presigned post: %v", err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for k, v := range form {
			_ = mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("file", "upload.txt")
		_, _ = fw.Write([]byte(content))
		_ = mw.Close()
		req, _ := http.NewRequest(http.MethodPost, u.String(), &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("posted", "form upload"); st != http.StatusNoContent {
		t.Fatalf("POST upload: status %d", st)
	}
	if st := post("too-big", "more than sixteen bytes"); st != http.StatusBadRequest {
		t.Fatalf("POST over content-length-range: status %d", st)
	}
	if _, err := mc.StatObject(ctx, "mcompat", "too-big", minio.StatObjectOptions{}); err == nil {
		t.Fatal("a POST refused by its policy stored the object")
	}
	obj, err := mc.GetObject(ctx, "mcompat", "posted", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(obj)
	obj.Close()
	if string(got) != "form upload" {
		t.Fatalf("POSTed object holds %q", got)
	}
	// A checksum the form supplies is checked and stored like a PUT's.
	good := minio.ChecksumCRC32C.ChecksumBytes([]byte("summed upload"))
	if st := post("summed", "summed upload", good); st != http.StatusNoContent {
		t.Fatalf("POST with its checksum: status %d", st)
	}
	st, err := mc.StatObject(ctx, "mcompat", "summed", minio.StatObjectOptions{Checksum: true})
	if err != nil || st.ChecksumCRC32C != good.Encoded() {
		t.Fatalf("POSTed checksum %q, want %q (%v)", st.ChecksumCRC32C, good.Encoded(), err)
	}
	if code := post("missummed", "other content", good); code != http.StatusBadRequest {
		t.Fatalf("POST with a wrong checksum: status %d", code)
	}
	if _, err := mc.StatObject(ctx, "mcompat", "missummed", minio.StatObjectOptions{}); err == nil {
		t.Fatal("a POST with a wrong checksum stored the object")
	}
}

// compatMinioV2 signs with Signature Version 2 headers, path style.
func compatMinioV2(t *testing.T, c *cluster, pool *x509.CertPool) {
	ctx := context.Background()
	cr := c.srv.Credentials()
	mc, err := minio.New(c.srv.S3Addr(), &minio.Options{Creds: mcreds.NewStaticV2(cr.AccessKey, cr.SecretKey, ""),
		Secure: pool != nil, Region: "us-east-1", Transport: loopbackTransport(t, c.srv.S3Addr(), pool), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	data := payload(33, 70_000)
	if _, err := mc.PutObject(ctx, "mcompat", "v2 key+", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{ContentType: "text/v2"}); err != nil {
		t.Fatalf("V2 put: %v", err)
	}
	obj, err := mc.GetObject(ctx, "mcompat", "v2 key+", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("V2 get: %v", err)
	}
	n := 0
	for o := range mc.ListObjects(ctx, "mcompat", minio.ListObjectsOptions{Prefix: "v2", Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("V2 list: %v", o.Err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("V2 list saw %d objects", n)
	}
	bad, _ := minio.New(c.srv.S3Addr(), &minio.Options{Creds: mcreds.NewStaticV2(cr.AccessKey, "wrong-secret", ""),
		Secure: pool != nil, Region: "us-east-1", Transport: loopbackTransport(t, c.srv.S3Addr(), pool), BucketLookup: minio.BucketLookupPath})
	if _, err := bad.StatObject(ctx, "mcompat", "v2 key+", minio.StatObjectOptions{}); minio.ToErrorResponse(err).StatusCode != http.StatusForbidden {
		t.Fatalf("V2 with a wrong secret: %v", err)
	}
}
