package e2e

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// TestObjectTagsKeepTheObject: as in S3, tagging an object changes
// neither its ETag nor its Last-Modified time, a multipart object's
// included (a tag change gives the version a new record, it does not
// copy the object, which would make a single-part ETag).
func TestObjectTagsKeepTheObject(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	const bucket = "tags"
	if err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	data := payload(41, 12<<20+77)
	if _, err := c.mc.PutObject(ctx, bucket, "big", bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	before, err := c.mc.StatObject(ctx, bucket, "big", minio.StatObjectOptions{})
	if err != nil || !strings.HasSuffix(before.ETag, "-3") {
		t.Fatalf("stat: %+v, %v; want a three-part ETag", before, err)
	}
	for _, set := range []map[string]string{{"env": "prod"}, {"env": "dev", "team": "backup"}} {
		tg, _ := tags.NewTags(set, true)
		if err := c.mc.PutObjectTagging(ctx, bucket, "big", tg, minio.PutObjectTaggingOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := c.mc.GetObjectTagging(ctx, bucket, "big", minio.GetObjectTaggingOptions{})
		if err != nil || len(got.ToMap()) != len(set) || got.ToMap()["env"] != set["env"] {
			t.Fatalf("tags %v, %v; want %v", got, err, set)
		}
		after, err := c.mc.StatObject(ctx, bucket, "big", minio.StatObjectOptions{})
		if err != nil || after.ETag != before.ETag || !after.LastModified.Equal(before.LastModified) || after.Size != before.Size {
			t.Fatalf("after tagging: ETag %s, modified %v, %d bytes (%v); before: %s, %v, %d",
				after.ETag, after.LastModified, after.Size, err, before.ETag, before.LastModified, before.Size)
		}
	}
	if err := c.mc.RemoveObjectTagging(ctx, bucket, "big", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := c.mc.GetObject(ctx, bucket, "big", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d put", len(got), err, len(data))
	}
}
