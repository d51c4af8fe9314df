package e2e

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// uploadFiles lists, over every peer, the files stored for one bucket's
// uploads in progress (records and part shards).
func uploadFiles(t *testing.T, c *cluster, bucket string) []string {
	t.Helper()
	var out []string
	for _, dir := range c.srv.PeerDirs() {
		root := filepath.Join(dir, "buckets", bucket, "uploads")
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root && errors.Is(err, fs.ErrNotExist) {
					return filepath.SkipDir
				}
				return err
			}
			if d.Type().IsRegular() {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	return out
}

// TestDeleteBucketWithUploads: a bucket whose only contents are uploads
// in progress is deleted, as S3 deletes it, and the uploads go with it on
// every peer; a bucket holding an object is not, and keeps its uploads.
func TestDeleteBucketWithUploads(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	start := func(bucket, key string) string {
		t.Helper()
		mp, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		part := bytes.Repeat([]byte("p"), 5<<20)
		if _, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: mp.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(part)}); err != nil {
			t.Fatal(err)
		}
		return aws.ToString(mp.UploadId)
	}

	mustMakeBucket(t, c, "mpdel")
	id := start("mpdel", "a")
	start("mpdel", "dir/b")
	if len(uploadFiles(t, c, "mpdel")) == 0 {
		t.Fatal("no upload files on any peer before the delete")
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("mpdel")}); err != nil {
		t.Fatalf("delete a bucket holding only uploads: %v", err)
	}
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("mpdel")}); apiCode(err) != "NotFound" {
		t.Fatalf("head the deleted bucket: %v", err)
	}
	if files := uploadFiles(t, c, "mpdel"); len(files) != 0 {
		t.Fatalf("upload files left: %v", files)
	}
	mustMakeBucket(t, c, "mpdel")
	out, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("mpdel")})
	if err != nil || len(out.Uploads) != 0 {
		t.Fatalf("uploads in the bucket made again: %v, %v", out, err)
	}
	_, err = cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpdel"), Key: aws.String("a"), UploadId: aws.String(id),
		PartNumber: aws.Int32(2), Body: bytes.NewReader([]byte("x"))})
	if apiCode(err) != "NoSuchUpload" {
		t.Fatalf("upload part to an upload of the deleted bucket: %v", err)
	}

	mustMakeBucket(t, c, "mpkeep")
	kept := start("mpkeep", "up")
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mpkeep"), Key: aws.String("obj"), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("mpkeep")}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("delete a bucket holding an object: %v", err)
	}
	parts, err := cl.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpkeep"), Key: aws.String("up"), UploadId: aws.String(kept)})
	if err != nil || len(parts.Parts) != 1 {
		t.Fatalf("upload after the refused delete: %v, %v", parts, err)
	}
}
