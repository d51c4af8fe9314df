package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestMinioBuckets(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	for _, b := range []string{"alpha", "beta.dots", "gamma-1"} {
		mustMakeBucket(t, c, b)
	}
	// us-east-1 answers re-creating your own bucket with 200, as S3.
	if err := c.mc.MakeBucket(ctx, "alpha", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("recreate bucket in us-east-1: %v", err)
	}
	buckets, err := c.mc.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range buckets {
		names = append(names, b.Name)
	}
	if got := strings.Join(names, ","); got != "alpha,beta.dots,gamma-1" {
		t.Fatalf("ListBuckets = %s", got)
	}
	if ok, err := c.mc.BucketExists(ctx, "beta.dots"); err != nil || !ok {
		t.Fatalf("BucketExists(beta.dots) = %v, %v", ok, err)
	}
	if ok, err := c.mc.BucketExists(ctx, "nope"); err != nil || ok {
		t.Fatalf("BucketExists(nope) = %v, %v", ok, err)
	}
	mustPut(t, c, "alpha", "k", []byte("x"), minio.PutObjectOptions{})
	if err := c.mc.RemoveBucket(ctx, "alpha"); errCode(err) != "BucketNotEmpty" {
		t.Fatalf("remove non-empty bucket: %v", err)
	}
	if err := c.mc.RemoveObject(ctx, "alpha", "k", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.mc.RemoveBucket(ctx, "alpha"); err != nil {
		t.Fatalf("remove emptied bucket: %v", err)
	}
	if err := c.mc.RemoveBucket(ctx, "alpha"); errCode(err) != "NoSuchBucket" {
		t.Fatalf("remove missing bucket: %v", err)
	}
	if _, err := c.mc.PutObject(ctx, "alpha", "k", bytes.NewReader(nil), 0, minio.PutObjectOptions{}); errCode(err) != "NoSuchBucket" {
		t.Fatalf("put into missing bucket: %v", err)
	}
}

// TestMinioObjectSizes round-trips the sizes at the edges of inlining and of
// erasure blocks, through single PUTs and minio-go's automatic multipart.
func TestMinioObjectSizes(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "sizes")
	sizes := []int{0, 1, 4 << 10, 128<<10 - 1, 128 << 10, 128<<10 + 1, testBlockSize - 1, testBlockSize, testBlockSize + 1, 3*testBlockSize + 12345}
	for i, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			data := payload(int64(i), size)
			key := fmt.Sprintf("obj-%d", size)
			info := mustPut(t, c, "sizes", key, data, minio.PutObjectOptions{ContentType: "application/x-test",
				UserMetadata: map[string]string{"Color": "blue"}})
			sum := md5.Sum(data)
			if info.ETag != hex.EncodeToString(sum[:]) {
				t.Fatalf("ETag = %s, want md5 %x", info.ETag, sum)
			}
			if got := mustGet(t, c, "sizes", key, minio.GetObjectOptions{}); !bytes.Equal(got, data) {
				t.Fatalf("GET returned %d bytes, differing from the %d put", len(got), len(data))
			}
			st, err := c.mc.StatObject(context.Background(), "sizes", key, minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Size != int64(size) || st.ContentType != "application/x-test" || st.UserMetadata["Color"] != "blue" || st.ETag != info.ETag {
				t.Fatalf("stat = size %d type %q meta %v etag %s", st.Size, st.ContentType, st.UserMetadata, st.ETag)
			}
		})
	}
}

func TestMinioRanges(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "ranges")
	data := payload(7, 2*testBlockSize+777)
	mustPut(t, c, "ranges", "r", data, minio.PutObjectOptions{})
	small := payload(8, 1000)
	mustPut(t, c, "ranges", "small", small, minio.PutObjectOptions{})
	cases := []struct {
		key        string
		start, end int64 // inclusive; end -1 = to the end
		src        []byte
	}{
		{"r", 0, 0, data}, {"r", 0, 99, data}, {"r", testBlockSize - 5, testBlockSize + 5, data},
		{"r", testBlockSize, -1, data}, {"r", int64(len(data)) - 1, int64(len(data)) - 1, data},
		{"r", 12345, 2*testBlockSize + 100, data}, {"small", 10, 20, small}, {"small", 999, 999, small},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d-%d", tc.key, tc.start, tc.end), func(t *testing.T) {
			var opts minio.GetObjectOptions
			end := tc.end
			if end < 0 {
				end = 0 // minio-go's spelling of "to the end"
			}
			if err := opts.SetRange(tc.start, end); err != nil {
				t.Fatal(err)
			}
			got := mustGet(t, c, "ranges", tc.key, opts)
			end = tc.end
			if end < 0 {
				end = int64(len(tc.src)) - 1
			}
			if !bytes.Equal(got, tc.src[tc.start:end+1]) {
				t.Fatalf("range returned %d bytes, not the expected %d", len(got), end+1-tc.start)
			}
		})
	}
	// A suffix range: the last 500 bytes.
	var opts minio.GetObjectOptions
	_ = opts.SetRange(0, -500)
	if got := mustGet(t, c, "ranges", "r", opts); !bytes.Equal(got, data[len(data)-500:]) {
		t.Fatalf("suffix range returned %d bytes", len(got))
	}
}

func TestMinioListObjectsV2(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "list")
	keys := []string{"a", "a/b", "a/b/c", "a/c", "b", "b/x/y", "c.txt", "dir/1", "dir/2", "dir/sub/3", "z", "ünï/ç"}
	for _, k := range keys {
		mustPut(t, c, "list", k, []byte(k), minio.PutObjectOptions{})
	}
	ctx := context.Background()
	list := func(opts minio.ListObjectsOptions) []string {
		var out []string
		for o := range c.mc.ListObjects(ctx, "list", opts) {
			if o.Err != nil {
				t.Fatalf("list %+v: %v", opts, o.Err)
			}
			out = append(out, o.Key)
		}
		return out
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	cases := []struct {
		name string
		opts minio.ListObjectsOptions
		want []string
	}{
		{"recursive", minio.ListObjectsOptions{Recursive: true}, sorted},
		{"delimiter", minio.ListObjectsOptions{}, []string{"a", "a/", "b", "b/", "c.txt", "dir/", "z", "ünï/"}},
		{"prefix", minio.ListObjectsOptions{Prefix: "dir/"}, []string{"dir/1", "dir/2", "dir/sub/"}},
		{"prefix-recursive", minio.ListObjectsOptions{Prefix: "a/", Recursive: true}, []string{"a/b", "a/b/c", "a/c"}},
		{"start-after", minio.ListObjectsOptions{StartAfter: "c.txt", Recursive: true}, []string{"dir/1", "dir/2", "dir/sub/3", "z", "ünï/ç"}},
		{"paged", minio.ListObjectsOptions{Recursive: true, MaxKeys: 2}, sorted},
		{"paged-delimiter", minio.ListObjectsOptions{MaxKeys: 1}, []string{"a", "a/", "b", "b/", "c.txt", "dir/", "z", "ünï/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// minio-go yields each page's keys before its prefixes.
			got := list(tc.opts)
			sort.Strings(got)
			sort.Strings(tc.want)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
	// One raw page, to check truncation and the continuation token.
	res, err := c.core.ListObjectsV2("list", "", "", "", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsTruncated || len(res.Contents) != 3 || res.NextContinuationToken == "" {
		t.Fatalf("page 1: truncated=%v n=%d token=%q", res.IsTruncated, len(res.Contents), res.NextContinuationToken)
	}
	res2, err := c.core.ListObjectsV2("list", "", "", res.NextContinuationToken, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Contents) != len(keys)-3 || res2.IsTruncated || res2.Contents[0].Key != sorted[3] {
		t.Fatalf("page 2: %d keys, truncated=%v", len(res2.Contents), res2.IsTruncated)
	}
}

func TestMinioOverwriteDeleteCopy(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "ops")
	mustMakeBucket(t, c, "dst")
	mustPut(t, c, "ops", "k", []byte("first"), minio.PutObjectOptions{})
	big := payload(3, 2*testBlockSize+3)
	mustPut(t, c, "ops", "k", big, minio.PutObjectOptions{ContentType: "text/big"})
	if got := mustGet(t, c, "ops", "k", minio.GetObjectOptions{}); !bytes.Equal(got, big) {
		t.Fatal("overwrite: GET did not return the newest object")
	}
	mustPut(t, c, "ops", "k", []byte("small again"), minio.PutObjectOptions{})
	if got := mustGet(t, c, "ops", "k", minio.GetObjectOptions{}); string(got) != "small again" {
		t.Fatalf("overwrite large→small: %q", got)
	}

	// Copy keeps metadata by default and replaces it on request.
	mustPut(t, c, "ops", "src", big, minio.PutObjectOptions{ContentType: "image/png", UserMetadata: map[string]string{"A": "1"}})
	if _, err := c.mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: "dst", Object: "copy"}, minio.CopySrcOptions{Bucket: "ops", Object: "src"}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	st, err := c.mc.StatObject(ctx, "dst", "copy", minio.StatObjectOptions{})
	if err != nil || st.ContentType != "image/png" || st.UserMetadata["A"] != "1" {
		t.Fatalf("copied stat: %+v %v", st, err)
	}
	if got := mustGet(t, c, "dst", "copy", minio.GetObjectOptions{}); !bytes.Equal(got, big) {
		t.Fatal("copy: bytes differ")
	}
	_, err = c.mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: "dst", Object: "copy2", ReplaceMetadata: true,
		UserMetadata: map[string]string{"B": "2", "Content-Type": "text/plain"}}, minio.CopySrcOptions{Bucket: "ops", Object: "src"})
	if err != nil {
		t.Fatalf("copy replace: %v", err)
	}
	st, err = c.mc.StatObject(ctx, "dst", "copy2", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["B"] != "2" || st.UserMetadata["A"] != "" || st.ContentType != "text/plain" {
		t.Fatalf("replaced stat: %+v %v", st, err)
	}

	// Delete: then NoSuchKey; deleting again is still a success.
	if err := c.mc.RemoveObject(ctx, "ops", "k", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.mc.StatObject(ctx, "ops", "k", minio.StatObjectOptions{}); errCode(err) != "NoSuchKey" {
		t.Fatalf("stat deleted: %v", err)
	}
	if err := c.mc.RemoveObject(ctx, "ops", "k", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete twice: %v", err)
	}

	// DeleteObjects.
	for i := 0; i < 20; i++ {
		mustPut(t, c, "ops", fmt.Sprintf("many/%02d", i), []byte{byte(i)}, minio.PutObjectOptions{})
	}
	objs := make(chan minio.ObjectInfo, 25)
	for i := 0; i < 25; i++ { // five of them do not exist: still no error
		objs <- minio.ObjectInfo{Key: fmt.Sprintf("many/%02d", i)}
	}
	close(objs)
	for e := range c.mc.RemoveObjects(ctx, "ops", objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("remove %s: %v", e.ObjectName, e.Err)
	}
	for o := range c.mc.ListObjects(ctx, "ops", minio.ListObjectsOptions{Prefix: "many/", Recursive: true}) {
		t.Errorf("left after DeleteObjects: %s %v", o.Key, o.Err)
	}
}

func TestMinioMultipart(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "mpu")
	const partSize = 5 << 20
	parts := [][]byte{payload(1, partSize), payload(2, partSize), payload(3, 1234)}
	id, err := c.core.NewMultipartUpload(ctx, "mpu", "big", minio.PutObjectOptions{ContentType: "video/x", UserMetadata: map[string]string{"K": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	var done []minio.CompletePart
	var md5s []byte
	for i, p := range parts {
		pi, err := c.core.PutObjectPart(ctx, "mpu", "big", id, i+1, bytes.NewReader(p), int64(len(p)), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		sum := md5.Sum(p)
		md5s = append(md5s, sum[:]...)
		done = append(done, minio.CompletePart{PartNumber: i + 1, ETag: pi.ETag})
	}
	lp, err := c.core.ListObjectParts(ctx, "mpu", "big", id, 0, 1000)
	if err != nil || len(lp.ObjectParts) != 3 || lp.ObjectParts[2].Size != 1234 {
		t.Fatalf("list parts: %+v %v", lp, err)
	}
	// Out of order and unknown parts are refused and change nothing.
	bad := []minio.CompletePart{done[1], done[0]}
	if _, err := c.core.CompleteMultipartUpload(ctx, "mpu", "big", id, bad, minio.PutObjectOptions{}); errCode(err) != "InvalidPartOrder" {
		t.Fatalf("out of order complete: %v", err)
	}
	if _, err := c.core.CompleteMultipartUpload(ctx, "mpu", "big", id, []minio.CompletePart{{PartNumber: 9, ETag: done[0].ETag}}, minio.PutObjectOptions{}); errCode(err) != "InvalidPart" {
		t.Fatalf("unknown part complete: %v", err)
	}
	info, err := c.core.CompleteMultipartUpload(ctx, "mpu", "big", id, done, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(md5s)
	if want := hex.EncodeToString(sum[:]) + "-3"; info.ETag != want {
		t.Fatalf("multipart ETag %s, want %s", info.ETag, want)
	}
	got := mustGet(t, c, "mpu", "big", minio.GetObjectOptions{})
	if !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatal("multipart object bytes differ")
	}
	var ro minio.GetObjectOptions
	_ = ro.SetRange(partSize-10, partSize+10) // across a part boundary
	if got := mustGet(t, c, "mpu", "big", ro); !bytes.Equal(got, bytes.Join(parts, nil)[partSize-10:partSize+11]) {
		t.Fatal("range across parts differs")
	}
	st, err := c.mc.StatObject(ctx, "mpu", "big", minio.StatObjectOptions{})
	if err != nil || st.ContentType != "video/x" || st.UserMetadata["K"] != "v" {
		t.Fatalf("stat multipart: %+v %v", st, err)
	}

	// A small non-final part fails completion with EntityTooSmall.
	id2, _ := c.core.NewMultipartUpload(ctx, "mpu", "small", minio.PutObjectOptions{})
	p1, _ := c.core.PutObjectPart(ctx, "mpu", "small", id2, 1, bytes.NewReader([]byte("tiny")), 4, minio.PutObjectPartOptions{})
	p2, _ := c.core.PutObjectPart(ctx, "mpu", "small", id2, 2, bytes.NewReader([]byte("tail")), 4, minio.PutObjectPartOptions{})
	_, err = c.core.CompleteMultipartUpload(ctx, "mpu", "small", id2, []minio.CompletePart{{PartNumber: 1, ETag: p1.ETag}, {PartNumber: 2, ETag: p2.ETag}}, minio.PutObjectOptions{})
	if errCode(err) != "EntityTooSmall" {
		t.Fatalf("small part complete: %v", err)
	}
	// Abort removes the upload.
	if err := c.core.AbortMultipartUpload(ctx, "mpu", "small", id2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.core.ListObjectParts(ctx, "mpu", "small", id2, 0, 1000); errCode(err) != "NoSuchUpload" {
		t.Fatalf("list parts of aborted upload: %v", err)
	}
	if _, err := c.mc.StatObject(ctx, "mpu", "small", minio.StatObjectOptions{}); errCode(err) != "NoSuchKey" {
		t.Fatalf("aborted upload left an object: %v", err)
	}
}

// TestMinioLargeObject streams an object over 100 MiB through minio-go's
// automatic multipart and reads it back by hash, never holding it whole.
func TestMinioLargeObject(t *testing.T) {
	if testing.Short() {
		t.Skip("large object round trip takes ~10 s of disk I/O; run without -short")
	}
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "large")
	const size = 101<<20 + 17
	if _, err := c.mc.PutObject(ctx, "large", "blob", newStream(42, size), size, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := c.mc.GetObject(ctx, "large", "blob", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	h := newHash()
	n, err := io.Copy(h, obj)
	if err != nil || n != size {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	if h.sum() != streamSum(42, size) {
		t.Fatal("large object bytes differ")
	}
}

func TestMinioStorageClasses(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "classes")
	data := payload(5, 3*testBlockSize+5)
	for _, class := range []string{"", "STANDARD", "REDUCED_REDUNDANCY", "ARCHIVE"} {
		key := "obj-" + class
		mustPut(t, c, "classes", key, data, minio.PutObjectOptions{StorageClass: class})
		st, err := c.mc.StatObject(ctx, "classes", key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := class
		if want == "" {
			want = "STANDARD"
		}
		// S3 omits the header for STANDARD.
		got := st.Metadata.Get("X-Amz-Storage-Class")
		if got != want && !(want == "STANDARD" && got == "") {
			t.Errorf("class %q reported as %q", class, got)
		}
		if got := mustGet(t, c, "classes", key, minio.GetObjectOptions{}); !bytes.Equal(got, data) {
			t.Errorf("class %q: bytes differ", class)
		}
	}
	for o := range c.mc.ListObjects(ctx, "classes", minio.ListObjectsOptions{}) {
		want := strings.TrimPrefix(o.Key, "obj-")
		if want == "" {
			want = "STANDARD"
		}
		if o.Err != nil || o.StorageClass != want {
			t.Errorf("listing %s: class %q, err %v", o.Key, o.StorageClass, o.Err)
		}
	}
	_, err := c.mc.PutObject(ctx, "classes", "wide", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{StorageClass: "WIDE"})
	if code := errCode(err); code != "InvalidStorageClass" {
		t.Fatalf("a 6+3 code on 6 peers: got %v (%s), want InvalidStorageClass", err, code)
	}
	_, err = c.mc.PutObject(ctx, "classes", "bogus", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{StorageClass: "NOPE"})
	if code := errCode(err); code != "InvalidStorageClass" {
		t.Fatalf("unknown class: got %v", err)
	}
}
