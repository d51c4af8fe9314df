package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/crc64nvme"

	"tessera/server"
)

// onlyReader hides Seek, so the SDK streams the body (aws-chunked with a
// checksum trailer over https) instead of hashing it up front.
type onlyReader struct{ io.Reader }

func crc32b64(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(s[:])
}

// TestCompatAWSSDK drives the S3 surface beyond the core with
// aws-sdk-go-v2 at its defaults, over https (aws-chunked, trailers,
// virtual-hosted style) and plain http (path style).
func TestCompatAWSSDK(t *testing.T) {
	withDomain := func(cfg *server.EmbeddedConfig) { cfg.Domains = []string{"localhost"} }
	t.Run("https-virtual-host", func(t *testing.T) {
		c, pool := tlsServer(t, withDomain)
		port := c.srv.S3Addr()[strings.LastIndex(c.srv.S3Addr(), ":"):]
		compatAWS(t, awsClient(t, c, "https://localhost"+port, pool, false), true)
	})
	t.Run("http-path-style", func(t *testing.T) {
		c := startServer(t)
		compatAWS(t, awsClient(t, c, "http://"+c.srv.S3Addr(), nil, true), false)
	})
}

func compatAWS(t *testing.T, cl *s3.Client, secure bool) {
	ctx := context.Background()
	b := aws.String("compat")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	data := payload(21, 300_000)
	var body io.Reader = bytes.NewReader(data)
	if secure {
		body = onlyReader{bytes.NewReader(data)}
	}
	put, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("obj"), Body: body,
		ContentLength: aws.Int64(int64(len(data))), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
		Tagging: aws.String("a=1&b=2"), CacheControl: aws.String("max-age=5")})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if aws.ToString(put.ChecksumCRC32) != crc32b64(data) {
		t.Fatalf("put echoed CRC32 %q, want %q", aws.ToString(put.ChecksumCRC32), crc32b64(data))
	}
	head, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("obj"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	if aws.ToString(head.ChecksumCRC32) != crc32b64(data) || aws.ToString(head.CacheControl) != "max-age=5" {
		t.Fatalf("head: crc32 %q cache-control %q", aws.ToString(head.ChecksumCRC32), aws.ToString(head.CacheControl))
	}
	if aws.ToInt32(head.TagCount) != 2 {
		t.Fatalf("tag count %d", aws.ToInt32(head.TagCount))
	}
	plain, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("obj")})
	if err != nil || plain.ChecksumCRC32 != nil {
		t.Fatalf("head without checksum mode: %v, crc %v", err, plain.ChecksumCRC32)
	}

	// CRC64NVME, the default of newer aws-cli v2, streamed in a trailer
	// over https.
	body = bytes.NewReader(data)
	if secure {
		body = onlyReader{bytes.NewReader(data)}
	}
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("nvme"), Body: body,
		ContentLength: aws.Int64(int64(len(data))), ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme}); err != nil {
		t.Fatalf("put crc64nvme: %v", err)
	}
	var nv [8]byte
	binary.BigEndian.PutUint64(nv[:], crc64nvme.Checksum(data))
	nh, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("nvme"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(nh.ChecksumCRC64NVME) != base64.StdEncoding.EncodeToString(nv[:]) {
		t.Fatalf("head crc64nvme: %v %q", err, aws.ToString(nh.ChecksumCRC64NVME))
	}

	compatAWSTagging(t, cl, b)
	compatAWSConditional(t, cl, b, data)
	compatAWSUploads(t, cl, b)
	compatAWSPresign(t, cl, b)

	loc, err := cl.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: b})
	if err != nil || (loc.LocationConstraint != "" && loc.LocationConstraint != "us-east-1") {
		t.Fatalf("location: %v %q", err, loc.LocationConstraint)
	}
	ver, err := cl.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b})
	if err != nil || ver.Status != "" {
		t.Fatalf("versioning: %v %q", err, ver.Status)
	}
}

func compatAWSTagging(t *testing.T, cl *s3.Client, b *string) {
	ctx := context.Background()
	tags := func() []string {
		out, err := cl.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("obj")})
		if err != nil {
			t.Fatalf("get tagging: %v", err)
		}
		var s []string
		for _, tg := range out.TagSet {
			s = append(s, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
		}
		sort.Strings(s)
		return s
	}
	if got := strings.Join(tags(), ","); got != "a=1,b=2" {
		t.Fatalf("tags from x-amz-tagging: %q", got)
	}
	_, err := cl.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("obj"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v w")}}}})
	if err != nil {
		t.Fatalf("put tagging: %v", err)
	}
	if got := strings.Join(tags(), ","); got != "k=v w" {
		t.Fatalf("tags after put: %q", got)
	}
	if _, err := cl.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: aws.String("obj")}); err != nil {
		t.Fatalf("delete tagging: %v", err)
	}
	if got := tags(); len(got) != 0 {
		t.Fatalf("tags after delete: %q", got)
	}
	_, err = cl.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("missing"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	if apiCode(err) != "NoSuchKey" {
		t.Fatalf("tagging a missing key: %v", err)
	}
}

func compatAWSConditional(t *testing.T, cl *s3.Client, b *string, data []byte) {
	ctx := context.Background()
	put := func(key string, in func(*s3.PutObjectInput)) error {
		p := &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: bytes.NewReader([]byte(key))}
		in(p)
		_, err := cl.PutObject(ctx, p)
		return err
	}
	if err := put("cond", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("If-None-Match * on a new key: %v", err)
	}
	if err := put("cond", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") }); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match * on an existing key: %v", err)
	}
	if err := put("cond", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(`"0123"`) }); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with a wrong ETag: %v", err)
	}
	h, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("cond")})
	if err != nil {
		t.Fatal(err)
	}
	if err := put("cond", func(p *s3.PutObjectInput) { p.IfMatch = h.ETag }); err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	// Copy with REPLACE and a failing copy-source condition changes nothing.
	_, err = cl.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("compat/obj"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/x-replaced"),
		CopySourceIfMatch: aws.String(`"0123"`)})
	if apiCode(err) != "PreconditionFailed" {
		t.Fatalf("copy with failing x-amz-copy-source-if-match: %v", err)
	}
	if _, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("copy")}); err == nil {
		t.Fatal("a failed conditional copy created its destination")
	}
	_, err = cl.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("compat/obj"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/x-replaced"),
		Metadata: map[string]string{"m": "1"}})
	if err != nil {
		t.Fatalf("copy REPLACE: %v", err)
	}
	ch, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("copy")})
	if err != nil || aws.ToString(ch.ContentType) != "text/x-replaced" || ch.Metadata["m"] != "1" || aws.ToInt64(ch.ContentLength) != int64(len(data)) {
		t.Fatalf("copy REPLACE result: %v %+v", err, ch)
	}
}

func compatAWSUploads(t *testing.T, cl *s3.Client, b *string) {
	ctx := context.Background()
	var ids []string
	for _, k := range []string{"mp/a", "mp/b"} {
		out, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(k)})
		if err != nil {
			t.Fatalf("create upload: %v", err)
		}
		ids = append(ids, aws.ToString(out.UploadId))
	}
	list, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b, Prefix: aws.String("mp/")})
	if err != nil || len(list.Uploads) != 2 || aws.ToString(list.Uploads[0].Key) != "mp/a" || aws.ToString(list.Uploads[1].UploadId) != ids[1] {
		t.Fatalf("list uploads: %v %+v", err, list)
	}
	page, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b, MaxUploads: aws.Int32(1)})
	if err != nil || len(page.Uploads) != 1 || !aws.ToBool(page.IsTruncated) || aws.ToString(page.NextKeyMarker) != "mp/a" {
		t.Fatalf("first page of uploads: %v %+v", err, page)
	}
	// UploadPartCopy: a 5 MiB range of a big source, then a small part.
	big := payload(22, 6<<20)
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("big"), Body: bytes.NewReader(big)}); err != nil {
		t.Fatal(err)
	}
	p1, err := cl.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("mp/a"), UploadId: aws.String(ids[0]),
		PartNumber: aws.Int32(1), CopySource: aws.String("compat/big"), CopySourceRange: aws.String("bytes=1-5242880")})
	if err != nil {
		t.Fatalf("upload part copy: %v", err)
	}
	p2, err := cl.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("mp/a"), UploadId: aws.String(ids[0]),
		PartNumber: aws.Int32(2), CopySource: aws.String("compat/big"), CopySourceRange: aws.String("bytes=100-199")})
	if err != nil {
		t.Fatalf("upload part copy 2: %v", err)
	}
	_, err = cl.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("mp/a"), UploadId: aws.String(ids[0]),
		PartNumber: aws.Int32(3), CopySource: aws.String("compat/big"), CopySourceRange: aws.String("bytes=0-99999999")})
	if apiCode(err) != "InvalidArgument" {
		t.Fatalf("copy range past the source: %v", err)
	}
	_, err = cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp/a"), UploadId: aws.String(ids[0]),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: p1.CopyPartResult.ETag}, {PartNumber: aws.Int32(2), ETag: p2.CopyPartResult.ETag}}}})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	got, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp/a")})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := io.ReadAll(got.Body)
	got.Body.Close()
	want := append(append([]byte{}, big[1:5242881]...), big[100:200]...)
	if err != nil || !bytes.Equal(gb, want) {
		t.Fatalf("part-copied object differs (%d bytes, want %d): %v", len(gb), len(want), err)
	}
	part2, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp/a"), PartNumber: aws.Int32(2)})
	if err != nil {
		t.Fatalf("get part 2: %v", err)
	}
	p2b, err := io.ReadAll(part2.Body)
	part2.Body.Close()
	if err != nil || !bytes.Equal(p2b, big[100:200]) || aws.ToInt32(part2.PartsCount) != 2 {
		t.Fatalf("part 2: %d bytes, parts count %d, %v", len(p2b), aws.ToInt32(part2.PartsCount), err)
	}
	if _, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("mp/b"), UploadId: aws.String(ids[1])}); err != nil {
		t.Fatal(err)
	}
	list, err = cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(list.Uploads) != 0 {
		t.Fatalf("uploads left after complete and abort: %v %+v", err, list.Uploads)
	}
}

func compatAWSPresign(t *testing.T, cl *s3.Client, b *string) {
	ctx := context.Background()
	ps := s3.NewPresignClient(cl)
	req, err := ps.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("presigned")})
	if err != nil {
		t.Fatal(err)
	}
	hreq, _ := http.NewRequest(http.MethodPut, req.URL, strings.NewReader("via presigned PUT"))
	for k, vs := range req.SignedHeader {
		hreq.Header[k] = vs
	}
	resp, err := (&http.Client{Transport: cl.Options().HTTPClient.(*http.Client).Transport}).Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %s", resp.Status)
	}
	got, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("presigned")})
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(gb) != "via presigned PUT" {
		t.Fatalf("presigned PUT stored %q", gb)
	}
}
