package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

func newAWS(t *testing.T, c *cluster) *s3.Client {
	t.Helper()
	// A CA bundle in the environment makes the SDK refuse plain http.
	if v, ok := os.LookupEnv("AWS_CA_BUNDLE"); ok {
		os.Unsetenv("AWS_CA_BUNDLE")
		t.Cleanup(func() { os.Setenv("AWS_CA_BUNDLE", v) })
	}
	cr := c.srv.Credentials()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://" + c.srv.S3Addr()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(cr.AccessKey, cr.SecretKey, ""),
		HTTPClient:   &http.Client{Transport: tr},
	})
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestAWSSDK exercises aws-sdk-go-v2 at its default settings (which send
// CRC checksums, and aws-chunked bodies where it chooses to).
func TestAWSSDK(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	b := aws.String("sdk")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: b}); err != nil {
		t.Fatalf("head bucket: %v", err)
	}
	data := payload(11, 3*testBlockSize+1)
	_, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("dir/a"), Body: bytes.NewReader(data),
		ContentType: aws.String("text/x"), Metadata: map[string]string{"owner": "me"}})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("dir/b"), Body: bytes.NewReader([]byte("second"))}); err != nil {
		t.Fatal(err)
	}
	out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("dir/a")})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, data) || aws.ToString(out.ContentType) != "text/x" || out.Metadata["owner"] != "me" {
		t.Fatalf("get: %d bytes type %q meta %v", len(got), aws.ToString(out.ContentType), out.Metadata)
	}
	rng, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("dir/a"), Range: aws.String("bytes=10-19")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rng.Body)
	rng.Body.Close()
	if !bytes.Equal(got, data[10:20]) || aws.ToString(rng.ContentRange) == "" {
		t.Fatalf("range: %q content-range %q", got, aws.ToString(rng.ContentRange))
	}
	head, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("dir/a")})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len(data)) {
		t.Fatalf("head: %v", err)
	}
	if _, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("none")}); err == nil {
		t.Fatal("head of a missing key succeeded")
	}
	if _, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("none")}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("get missing: %v", err)
	}

	if _, err := cl.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("sdk/dir/a")}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	awsMultipart(t, cl, "sdk", "mp")
	awsList(t, cl, "sdk", []string{"copy", "dir/a", "dir/b", "mp"})
	awsPresign(t, cl, c, "sdk")

	del, err := cl.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("copy")}, {Key: aws.String("dir/a")}, {Key: aws.String("dir/b")}, {Key: aws.String("mp")}, {Key: aws.String("presigned")}}}})
	if err != nil || len(del.Errors) != 0 || len(del.Deleted) != 5 {
		t.Fatalf("delete objects: %+v %v", del, err)
	}
	if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("never")}); err != nil {
		t.Fatalf("delete missing key: %v", err)
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err != nil {
		t.Fatalf("delete bucket: %v", err)
	}
}

func awsMultipart(t *testing.T, cl *s3.Client, bucket, key string) {
	t.Helper()
	ctx := context.Background()
	mp, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("create multipart: %v", err)
	}
	parts := [][]byte{payload(21, 5<<20), payload(22, 100)}
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1)),
			ChecksumCRC32: up.ChecksumCRC32, ChecksumCRC32C: up.ChecksumCRC32C, ChecksumCRC64NVME: up.ChecksumCRC64NVME})
	}
	lp, err := cl.ListParts(ctx, &s3.ListPartsInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId})
	if err != nil || len(lp.Parts) != 2 {
		t.Fatalf("list parts: %v", err)
	}
	if _, err := cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key,
		UploadId: mp.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatalf("complete: %v", err)
	}
	out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatal("multipart bytes differ")
	}
	// Abort of a second upload.
	mp2, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: aws.String("aborted")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: aws.String("aborted"), UploadId: mp2.UploadId}); err != nil {
		t.Fatalf("abort: %v", err)
	}
}

func awsList(t *testing.T, cl *s3.Client, bucket string, want []string) {
	t.Helper()
	var got []string
	p := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: &bucket, MaxKeys: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list page: %v", err)
		}
		for _, o := range page.Contents {
			got = append(got, aws.ToString(o.Key))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("paginated list %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("paginated list %q, want %q", got, want)
		}
	}
	d, err := cl.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Delimiter: aws.String("/")})
	if err != nil || len(d.CommonPrefixes) != 1 || aws.ToString(d.CommonPrefixes[0].Prefix) != "dir/" {
		t.Fatalf("delimiter list: %+v %v", d, err)
	}
}

func awsPresign(t *testing.T, cl *s3.Client, c *cluster, bucket string) {
	t.Helper()
	ctx := context.Background()
	ps := s3.NewPresignClient(cl)
	put, err := ps.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("presigned")}, s3.WithPresignExpires(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(put.Method, put.URL, bytes.NewReader([]byte("via presigned put")))
	for k, v := range put.SignedHeader {
		req.Header[k] = v
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("presigned put: %v %v", resp, err)
	}
	resp.Body.Close()
	get, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("presigned")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = hc.Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "via presigned put" {
		t.Fatalf("presigned get: %d %q", resp.StatusCode, b)
	}
	u := []byte(get.URL)
	i := bytes.Index(u, []byte("X-Amz-Signature=")) + len("X-Amz-Signature=")
	// One hex digit of the signature changed, still a well-formed hex digit.
	if u[i] == '0' {
		u[i] = '1'
	} else {
		u[i] = '0'
	}
	resp, err = hc.Get(string(u))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("tampered presigned get: %d", resp.StatusCode)
	}
}
