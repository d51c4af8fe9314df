package e2e

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// TestBucketTaggingSDK sets, reads and removes a bucket's tags through
// aws-sdk-go-v2 (which sends a checksum with each body) and minio-go, on
// the embedded server: stored on the peers, read back by either client.
func TestBucketTaggingSDK(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const bucket = "tagged"
	_, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{Tags: []types.Tag{{Key: aws.String("made"), Value: aws.String("at-create")}}}})
	if err != nil {
		t.Fatalf("CreateBucket with tags: %v", err)
	}
	got, err := cl.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err != nil || len(got.TagSet) != 1 || aws.ToString(got.TagSet[0].Key) != "made" {
		t.Fatalf("GetBucketTagging after CreateBucket = %+v, %v; want made=at-create", got, err)
	}
	set := []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}, {Key: aws.String("owner"), Value: aws.String("backup team")}}
	if _, err := cl.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket), Tagging: &types.Tagging{TagSet: set}}); err != nil {
		t.Fatalf("PutBucketTagging: %v", err)
	}
	mt, err := c.mc.GetBucketTagging(ctx, bucket)
	if err != nil {
		t.Fatalf("minio-go GetBucketTagging: %v", err)
	}
	if m := mt.ToMap(); len(m) != 2 || m["env"] != "prod" || m["owner"] != "backup team" {
		t.Fatalf("minio-go reads the tags as %v", m)
	}
	nt, _ := tags.NewTags(map[string]string{"only": "one"}, false)
	if err := c.mc.SetBucketTagging(ctx, bucket, nt); err != nil {
		t.Fatalf("minio-go SetBucketTagging: %v", err)
	}
	got, err = cl.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err != nil || len(got.TagSet) != 1 || aws.ToString(got.TagSet[0].Value) != "one" {
		t.Fatalf("GetBucketTagging after minio-go's set = %+v, %v", got, err)
	}
	if _, err := cl.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucketTagging: %v", err)
	}
	if _, err := cl.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)}); apiCode(err) != "NoSuchTagSet" {
		t.Fatalf("GetBucketTagging after delete: %v, want NoSuchTagSet", err)
	}
	// A deleted bucket's tags do not come back with a new bucket of its name.
	if _, err := cl.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket), Tagging: &types.Tagging{TagSet: set}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)}); apiCode(err) != "NoSuchTagSet" {
		t.Fatalf("a re-created bucket: GetBucketTagging %v, want NoSuchTagSet", err)
	}
}
