package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"tessera/server"
)

// noRetry makes the SDK report the first answer: a 503 would otherwise be
// retried and only slow the test down.
func noRetry(o *s3.Options) { o.RetryMaxAttempts = 1 }

// An upload ID the server never issued, however malformed, is NoSuchUpload
// on every multipart operation, never a retryable 503.
func TestCompatMalformedUploadID(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	b, k := aws.String("uploads"), aws.String("key")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(id *string) error{
		"UploadPart": func(id *string) error {
			_, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: id, PartNumber: aws.Int32(1),
				Body: bytes.NewReader([]byte("part"))}, noRetry)
			return err
		},
		"ListParts": func(id *string) error {
			_, err := cl.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: id}, noRetry)
			return err
		},
		"CompleteMultipartUpload": func(id *string) error {
			_, err := cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: id,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
					{PartNumber: aws.Int32(1), ETag: aws.String(`"d41d8cd98f00b204e9800998ecf8427e"`)}}}}, noRetry)
			return err
		},
		"AbortMultipartUpload": func(id *string) error {
			_, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: k, UploadId: id}, noRetry)
			return err
		},
	}
	for _, id := range []string{"a b", "a/b", strings.Repeat("f", 300), "not-hex-zz", ".dot"} {
		for name, op := range ops {
			if err := op(aws.String(id)); apiCode(err) != "NoSuchUpload" {
				t.Errorf("%s with upload id %.20q: %v, want NoSuchUpload", name, id, err)
			}
		}
	}
}

// uploadTwoParts starts an upload of key with a 5 MiB and a small part and
// returns its id, the Complete list and the object's bytes.
func uploadTwoParts(t *testing.T, cl *s3.Client, b, key string) (*string, []types.CompletedPart, []byte) {
	t.Helper()
	ctx := context.Background()
	mp, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &b, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	data := payload(31, 5<<20+1000)
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{data[:5<<20], data[5<<20:]} {
		n := aws.Int32(int32(i + 1))
		out, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: &b, Key: &key, UploadId: mp.UploadId, PartNumber: n,
			Body: bytes.NewReader(chunk)})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: n, ETag: out.ETag})
	}
	return mp.UploadId, parts, data
}

// CompleteMultipartUpload repeated after success, and raced by concurrent
// callers, returns the same result, as S3 does; the body is checked as S3
// checks it.
func TestCompatCompleteMultipart(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const b = "complete"
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	complete := func(key string, id *string, parts []types.CompletedPart) (*s3.CompleteMultipartUploadOutput, error) {
		return cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key),
			UploadId: id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}, noRetry)
	}

	id, parts, data := uploadTwoParts(t, cl, b, "again")
	for name, bad := range map[string][]types.CompletedPart{
		"InvalidPartOrder": {parts[0], parts[0], parts[1]},
		"MalformedXML":     {{ETag: parts[0].ETag}},
		"InvalidArgument":  {{PartNumber: aws.Int32(-4), ETag: parts[0].ETag}},
		"InvalidPart":      {parts[0], {PartNumber: aws.Int32(10001), ETag: parts[1].ETag}},
	} {
		if _, err := complete("again", id, bad); apiCode(err) != name {
			t.Errorf("complete with a %s list: %v", name, err)
		}
	}
	first, err := complete("again", id, parts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := complete("again", id, parts)
	if err != nil {
		t.Fatalf("repeated complete: %v", err)
	}
	if aws.ToString(second.ETag) != aws.ToString(first.ETag) || aws.ToString(second.Location) != aws.ToString(first.Location) ||
		aws.ToString(second.Bucket) != b || aws.ToString(second.Key) != "again" {
		t.Fatalf("repeated complete %+v, first %+v", second, first)
	}
	if _, err := complete("again", id, parts[:1]); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("repeat with another parts list: %v", err)
	}
	if _, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("again"), UploadId: id}, noRetry); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("abort of a completed upload: %v", err)
	}
	checkObject(t, cl, b, "again", data)

	id, parts, data = uploadTwoParts(t, cl, b, "raced")
	etags := make([]string, 5)
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range etags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := complete("raced", id, parts)
			if out != nil {
				etags[i] = aws.ToString(out.ETag)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range etags {
		if errs[i] != nil || etags[i] != etags[0] {
			t.Fatalf("concurrent complete %d: %q %v (first %q)", i, etags[i], errs[i], etags[0])
		}
	}
	checkObject(t, cl, b, "raced", data)
}

func checkObject(t *testing.T, cl *s3.Client, b, key string, want []byte) {
	t.Helper()
	out, err := cl.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &b, Key: &key})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get %s: %d bytes (want %d), %v", key, len(got), len(want), err)
	}
}

// Range headers as S3 reads them, sent by aws-sdk-go-v2 as given, on a
// 100-byte and on a 0-byte object, through GET and HEAD.
func TestCompatRanges(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	b := aws.String("ranges")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	data := payload(41, 100)
	for key, body := range map[string][]byte{"obj": data, "empty": nil} {
		if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		key, rng, contentRange string
		want                   []byte // nil with contentRange "": 416
	}{
		{"obj", "bytes=0-9", "bytes 0-9/100", data[:10]},
		{"obj", "bytes=00-01", "bytes 0-1/100", data[:2]},
		{"obj", "bytes=-1", "bytes 99-99/100", data[99:]},
		{"obj", "bytes=-101", "bytes 0-99/100", data},
		{"obj", "bytes=50-", "bytes 50-99/100", data[50:]},
		{"obj", "bytes=0-999999", "bytes 0-99/100", data},
		{"obj", "bytes= -1", "", data},
		{"obj", "bytes=0 -1", "", data},
		{"obj", "bytes=--1", "", data},
		{"obj", "bytes=10-5", "", data},
		{"obj", "bytes=0-0,1-2", "", data},
		{"obj", "foo=0-1", "", data},
		{"obj", "bytes=abc", "", data},
		{"obj", "bytes=-0", "", nil},
		{"obj", "bytes=100-100", "", nil},
		{"empty", "bytes=-1", "", []byte{}},
		{"empty", "bytes= -1", "", []byte{}},
		{"empty", "bytes=0-", "", nil},
		{"empty", "bytes=0-0", "", nil},
		{"empty", "bytes=-0", "", nil},
	}
	for _, tc := range cases {
		got, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(tc.key), Range: aws.String(tc.rng)})
		head, herr := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(tc.key), Range: aws.String(tc.rng)})
		if tc.want == nil {
			if apiCode(err) != "InvalidRange" || apiCode(herr) != "RequestedRangeNotSatisfiable" {
				t.Errorf("%s %q: get %v, head %v; want 416", tc.key, tc.rng, err, herr)
			}
			continue
		}
		if err != nil || herr != nil {
			t.Errorf("%s %q: get %v, head %v", tc.key, tc.rng, err, herr)
			continue
		}
		body, err := io.ReadAll(got.Body)
		got.Body.Close()
		if err != nil || !bytes.Equal(body, tc.want) || aws.ToString(got.ContentRange) != tc.contentRange ||
			aws.ToString(head.ContentRange) != tc.contentRange || aws.ToInt64(head.ContentLength) != int64(len(tc.want)) {
			t.Errorf("%s %q: %d bytes, Content-Range %q (head %q, %d bytes); want %d bytes, %q", tc.key, tc.rng, len(body),
				aws.ToString(got.ContentRange), aws.ToString(head.ContentRange), aws.ToInt64(head.ContentLength), len(tc.want), tc.contentRange)
		}
	}
}

// partNumber reads of single-PUT, multipart and empty objects, and the
// partNumber values S3 refuses.
func TestCompatPartNumber(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	rc := newRaw(t, c)
	ctx := context.Background()
	const b = "parts"
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	single := payload(51, 1234)
	for key, body := range map[string][]byte{"single": single, "empty": nil} {
		if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	id, parts, data := uploadTwoParts(t, cl, b, "multi")
	if _, err := cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("multi"),
		UploadId: id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key          string
		part         int32
		want         []byte
		contentRange string
		count        int32
		status       int
	}{
		{"single", 1, single, "bytes 0-1233/1234", 0, 206},
		{"empty", 1, []byte{}, "", 0, 200},
		{"multi", 1, data[:5<<20], "bytes 0-5242879/5243880", 2, 206},
		{"multi", 2, data[5<<20:], "bytes 5242880-5243879/5243880", 2, 206},
	}
	for _, tc := range cases {
		out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(tc.key), PartNumber: aws.Int32(tc.part)})
		if err != nil {
			t.Fatalf("%s part %d: %v", tc.key, tc.part, err)
		}
		body, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || !bytes.Equal(body, tc.want) || aws.ToString(out.ContentRange) != tc.contentRange || aws.ToInt32(out.PartsCount) != tc.count {
			t.Errorf("%s part %d: %d bytes, Content-Range %q, parts count %d", tc.key, tc.part, len(body),
				aws.ToString(out.ContentRange), aws.ToInt32(out.PartsCount))
		}
		for _, method := range []string{"GET", "HEAD"} {
			if status, _, _ := rc.do(rawReq{method: method, path: fmt.Sprintf("/%s/%s?partNumber=%d", b, tc.key, tc.part)}); status != tc.status {
				t.Errorf("%s %s part %d: status %d, want %d", method, tc.key, tc.part, status, tc.status)
			}
		}
	}
	if _, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("multi"), PartNumber: aws.Int32(3)}); apiCode(err) != "InvalidPartNumber" {
		t.Errorf("part past the last: %v", err)
	}
	if _, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("single"), PartNumber: aws.Int32(-3)}); apiCode(err) != "InvalidArgument" {
		t.Errorf("partNumber -3: %v", err)
	}
	for _, pn := range []string{"0", "10001", "abc"} {
		rc.expectError("partNumber="+pn, rawReq{method: "GET", path: "/parts/single?partNumber=" + pn}, 400, "InvalidArgument")
	}
}

// Copy-source conditions in S3's precedence, conditional deletes, tag
// errors and re-created buckets, as aws-sdk-go-v2 sends them.
func TestCompatConditionsTagsBuckets(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	b := aws.String("conds")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	// us-east-1: re-creating your own bucket is 200, its location empty.
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatalf("re-create in us-east-1: %v", err)
	}
	if loc, err := cl.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: b}); err != nil || loc.LocationConstraint != "" {
		t.Fatalf("location: %v %q", err, loc.LocationConstraint)
	}
	put, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: bytes.NewReader([]byte("dummy"))})
	if err != nil {
		t.Fatal(err)
	}
	longAgo, future := time.Now().Add(-72*time.Hour), time.Now().Add(72*time.Hour)
	copyCases := []struct {
		name string
		in   func(*s3.CopyObjectInput)
		code string
	}{
		{"if-match true, if-unmodified-since false", func(in *s3.CopyObjectInput) {
			in.CopySourceIfMatch, in.CopySourceIfUnmodifiedSince = put.ETag, &longAgo
		}, ""},
		{"if-none-match false, if-modified-since true", func(in *s3.CopyObjectInput) {
			in.CopySourceIfNoneMatch, in.CopySourceIfModifiedSince = put.ETag, &longAgo
		}, "PreconditionFailed"},
		{"if-modified-since false", func(in *s3.CopyObjectInput) { in.CopySourceIfModifiedSince = aws.Time(time.Now()) }, "PreconditionFailed"},
		{"if-modified-since in the future", func(in *s3.CopyObjectInput) { in.CopySourceIfModifiedSince = &future }, ""},
	}
	for _, cc := range copyCases {
		in := &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: aws.String("conds/src")}
		cc.in(in)
		if _, err := cl.CopyObject(ctx, in, noRetry); apiCode(err) != cc.code {
			t.Errorf("copy with %s: %v, want %q", cc.name, err, cc.code)
		}
	}

	del := func(in *s3.DeleteObjectInput) error {
		in.Bucket, in.Key = b, aws.String("src")
		_, err := cl.DeleteObject(ctx, in, noRetry)
		return err
	}
	if err := del(&s3.DeleteObjectInput{IfMatch: aws.String(`"incorrect_etag"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with a wrong If-Match: %v", err)
	}
	if err := del(&s3.DeleteObjectInput{IfMatchSize: aws.Int64(23234)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with a wrong size: %v", err)
	}
	head, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("src")})
	if err != nil {
		t.Fatalf("a refused delete removed the object: %v", err)
	}
	if err := del(&s3.DeleteObjectInput{IfMatch: put.ETag, IfMatchSize: aws.Int64(5), IfMatchLastModifiedTime: head.LastModified}); err != nil {
		t.Fatalf("delete with matching conditions: %v", err)
	}
	if err := del(&s3.DeleteObjectInput{IfMatch: put.ETag}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("If-Match delete of a missing key: %v", err)
	}

	var eleven []types.Tag
	for i := range 11 {
		eleven = append(eleven, types.Tag{Key: aws.String(fmt.Sprintf("key-%d", i)), Value: aws.String("v")})
	}
	tagCases := map[string][]types.Tag{
		"BadRequest": eleven,
		"InvalidTag": {{Key: aws.String("user!name"), Value: aws.String("value")}},
	}
	for code, tags := range tagCases {
		_, err := cl.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("dst"), Tagging: &types.Tagging{TagSet: tags}})
		if apiCode(err) != code {
			t.Errorf("PutObjectTagging: %v, want %s", err, code)
		}
	}
	for hdr, code := range map[string]string{"key=val&key=val": "InvalidArgument", "=": "InvalidArgument", "key(=val": "InvalidTag"} {
		_, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("tagged"), Body: bytes.NewReader(nil), Tagging: aws.String(hdr)})
		if apiCode(err) != code {
			t.Errorf("x-amz-tagging %q: %v, want %s", hdr, err, code)
		}
	}
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("tagged"), Body: bytes.NewReader(nil),
		Tagging: aws.String("key++key=value%20value&k")}); err != nil {
		t.Fatalf("x-amz-tagging S3 accepts: %v", err)
	}
	tg, err := cl.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("tagged")})
	if err != nil || len(tg.TagSet) != 2 || aws.ToString(tg.TagSet[0].Key) != "k" || aws.ToString(tg.TagSet[1].Value) != "value value" {
		t.Fatalf("tags: %v %+v", err, tg)
	}
}

// Outside us-east-1, re-creating your own bucket is BucketAlreadyOwnedByYou.
func TestCompatCreateBucketOtherRegion(t *testing.T) {
	c := startServer(t, func(cfg *server.EmbeddedConfig) { cfg.Region = "eu-west-1" })
	cl := newAWS(t, c)
	ctx := context.Background()
	inRegion := func(o *s3.Options) { o.Region = "eu-west-1" }
	in := &s3.CreateBucketInput{Bucket: aws.String("elsewhere"), CreateBucketConfiguration: &types.CreateBucketConfiguration{
		LocationConstraint: types.BucketLocationConstraintEuWest1}}
	if _, err := cl.CreateBucket(ctx, in, inRegion); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateBucket(ctx, in, inRegion); apiCode(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("re-create in eu-west-1: %v", err)
	}
	loc, err := cl.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("elsewhere")}, inRegion)
	if err != nil || loc.LocationConstraint != types.BucketLocationConstraintEuWest1 {
		t.Fatalf("location: %v %q", err, loc.LocationConstraint)
	}
}
