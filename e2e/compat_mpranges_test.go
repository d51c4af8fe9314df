package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
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
