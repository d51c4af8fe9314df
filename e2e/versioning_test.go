package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/minio/minio-go/v7"
)

// TestVersioning drives a versioned bucket on a real cluster with two
// clients: versions of every size class (inlined, erasure-coded,
// multipart) read back byte-exact by version ID, a delete marker hides
// the key without losing a version, a copy reads an old version, the
// listings page through versions in S3's order, and deleting every
// version by ID empties the bucket so that it can be removed.
func TestVersioning(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const bucket, key = "backups", "snap/data"
	if err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.mc.EnableVersioning(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	if cfg, err := c.mc.GetBucketVersioning(ctx, bucket); err != nil || !cfg.Enabled() {
		t.Fatalf("versioning %+v, %v", cfg, err)
	}

	bodies := map[string][]byte{}
	var order []string // version IDs, oldest first
	for i, size := range []int{100, 300_000} {
		data := payload(int64(i), size)
		info, err := c.mc.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		if err != nil || info.VersionID == "" {
			t.Fatalf("put %d bytes: %+v, %v", size, info, err)
		}
		bodies[info.VersionID] = data
		order = append(order, info.VersionID)
	}
	id, data := putMultipartVersion(ctx, t, c, bucket, key)
	bodies[id] = data
	order = append(order, id)

	for id, want := range bodies {
		if got := readVersion(ctx, t, c, bucket, key, id); !bytes.Equal(got, want) {
			t.Fatalf("version %s: %d bytes differ from the %d written", id, len(got), len(want))
		}
	}
	if got := readVersion(ctx, t, c, bucket, key, ""); !bytes.Equal(got, data) {
		t.Fatal("the latest version is not the multipart one")
	}

	cp, err := c.mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: "copy"},
		minio.CopySrcOptions{Bucket: bucket, Object: key, VersionID: order[0]})
	if err != nil || cp.VersionID == "" {
		t.Fatalf("copy of %s: %+v, %v", order[0], cp, err)
	}
	if got := readVersion(ctx, t, c, bucket, "copy", ""); !bytes.Equal(got, bodies[order[0]]) {
		t.Fatal("copy of an old version has other bytes")
	}

	if err := c.mc.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.mc.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Fatalf("stat behind a delete marker: %v", err)
	}
	for id, want := range bodies {
		if got := readVersion(ctx, t, c, bucket, key, id); !bytes.Equal(got, want) {
			t.Fatalf("version %s lost to the delete marker", id)
		}
	}

	// aws-sdk-go-v2 pages one entry at a time: the marker, then the
	// versions newest first, then the copy.
	var lines []string
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)}
	for pages := 0; pages < 20; pages++ {
		out, err := cl.ListObjectVersions(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.DeleteMarkers {
			lines = append(lines, fmt.Sprintf("%s marker latest=%v", *m.Key, *m.IsLatest))
		}
		for _, v := range out.Versions {
			lines = append(lines, fmt.Sprintf("%s %s latest=%v", *v.Key, *v.VersionId, *v.IsLatest))
		}
		if !*out.IsTruncated {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	want := []string{
		"copy " + cp.VersionID + " latest=true",
		key + " marker latest=true",
		key + " " + order[2] + " latest=false",
		key + " " + order[1] + " latest=false",
		key + " " + order[0] + " latest=false",
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Fatalf("versions listed\n%q\nwant\n%q", lines, want)
	}
	listed := 0
	for o := range c.mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if o.Key != "copy" {
			t.Errorf("ListObjects shows %q", o.Key)
		}
		listed++
	}
	if listed != 1 {
		t.Errorf("ListObjects shows %d keys, want 1", listed)
	}

	// Removing every version and marker by ID empties the bucket.
	for o := range c.mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if err := c.mc.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{VersionID: o.VersionID}); err != nil {
			t.Fatalf("remove %s@%s: %v", o.Key, o.VersionID, err)
		}
	}
	if err := c.mc.RemoveBucket(ctx, bucket); err != nil {
		t.Fatalf("remove the emptied bucket: %v", err)
	}
}

// putMultipartVersion writes key by a two-part upload and returns the
// version ID and the bytes.
func putMultipartVersion(ctx context.Context, t *testing.T, c *cluster, bucket, key string) (string, []byte) {
	t.Helper()
	id, err := c.core.NewMultipartUpload(ctx, bucket, key, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := payload(7, 5<<20+1000)
	var parts []minio.CompletePart
	for i, chunk := range [][]byte{data[:5<<20], data[5<<20:]} {
		p, err := c.core.PutObjectPart(ctx, bucket, key, id, i+1, bytes.NewReader(chunk), int64(len(chunk)), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag})
	}
	info, err := c.core.CompleteMultipartUpload(ctx, bucket, key, id, parts, minio.PutObjectOptions{})
	if err != nil || info.VersionID == "" {
		t.Fatalf("complete: %+v, %v", info, err)
	}
	return info.VersionID, data
}

// readVersion reads key at version id ("" for the latest).
func readVersion(ctx context.Context, t *testing.T, c *cluster, bucket, key, id string) []byte {
	t.Helper()
	o, err := c.mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{VersionID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s@%s: %v", key, id, err)
	}
	return b
}

// TestObjectLock: on a real cluster, through aws-sdk-go-v2, a version
// under compliance retention survives every delete and overwrite and
// cannot have its retention shortened, bypass header or not; a
// governance version goes only with the bypass header; a legal hold
// keeps a version until it is lifted.
func TestObjectLock(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	bucket := aws.String("vault")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, data []byte, mode types.ObjectLockMode, hold types.ObjectLockLegalHoldStatus) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: bytes.NewReader(data),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		if mode != "" {
			in.ObjectLockMode, in.ObjectLockRetainUntilDate = mode, aws.Time(time.Now().Add(time.Hour))
		}
		if hold != "" {
			in.ObjectLockLegalHoldStatus = hold
		}
		out, err := cl.PutObject(ctx, in)
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return *out.VersionId
	}
	denied := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDenied" {
			t.Fatalf("%s: %v, want AccessDenied", what, err)
		}
	}
	data := payload(1, 300_000)
	comp := put("comp", data, types.ObjectLockModeCompliance, "")
	_, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("comp"), VersionId: &comp,
		BypassGovernanceRetention: aws.Bool(true)})
	denied("delete of a compliance version", err)
	_, err = cl.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: bucket, Key: aws.String("comp"), VersionId: &comp,
		BypassGovernanceRetention: aws.Bool(true), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: aws.Time(time.Now().Add(time.Minute))}})
	denied("shortening a compliance retention", err)
	put("comp", []byte("overwrite"), "", "") // a new version; the locked one stays
	if got := readVersion(ctx, t, c, *bucket, "comp", comp); !bytes.Equal(got, data) {
		t.Fatal("the compliance version changed")
	}
	ret, err := cl.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: bucket, Key: aws.String("comp"), VersionId: &comp})
	if err != nil || ret.Retention.Mode != types.ObjectLockRetentionModeCompliance {
		t.Fatalf("retention %+v, %v", ret, err)
	}

	gov := put("gov", []byte("g"), types.ObjectLockModeGovernance, "")
	_, err = cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("gov"), VersionId: &gov})
	denied("delete of a governance version without the bypass", err)
	if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("gov"), VersionId: &gov,
		BypassGovernanceRetention: aws.Bool(true)}); err != nil {
		t.Fatalf("delete of a governance version with the bypass: %v", err)
	}

	held := put("held", []byte("h"), "", types.ObjectLockLegalHoldStatusOn)
	_, err = cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("held"), VersionId: &held})
	denied("delete under a legal hold", err)
	if _, err := cl.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: bucket, Key: aws.String("held"), VersionId: &held,
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
		LegalHold:         &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("held"), VersionId: &held}); err != nil {
		t.Fatalf("delete after the legal hold was lifted: %v", err)
	}
}

// TestLockAndTagChangesCompose: on a real cluster, tag changes racing a
// legal hold and a retention change of the same version never undo them:
// each change applies to the version as the others left it, so after
// every round the hold, the retention and the last tags are all there.
func TestLockAndTagChangesCompose(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	bucket, key := aws.String("compose"), aws.String("k")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	out, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: key, Body: bytes.NewReader(payload(2, 200_000)),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	id := out.VersionId
	base := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	const tagWrites = 12
	for round := range 4 {
		until := base.Add(time.Duration(round) * time.Minute)
		errs := make(chan error, 2)
		go func() {
			for i := range tagWrites {
				_, err := cl.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: bucket, Key: key, VersionId: id,
					ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
					Tagging:           &types.Tagging{TagSet: []types.Tag{{Key: aws.String("n"), Value: aws.String(fmt.Sprint(round, "-", i))}}}})
				if err != nil {
					errs <- fmt.Errorf("tagging %d: %w", i, err)
					return
				}
			}
			errs <- nil
		}()
		go func() {
			if _, err := cl.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: bucket, Key: key, VersionId: id,
				ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
				LegalHold:         &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
				errs <- fmt.Errorf("legal hold: %w", err)
				return
			}
			_, err := cl.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: bucket, Key: key, VersionId: id,
				ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
				Retention:         &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: aws.Time(until)}})
			if err != nil {
				err = fmt.Errorf("retention: %w", err)
			}
			errs <- err
		}()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		hold, err := cl.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: bucket, Key: key, VersionId: id})
		if err != nil || hold.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
			t.Fatalf("round %d: legal hold %+v, %v: a tag change undid it", round, hold, err)
		}
		ret, err := cl.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: bucket, Key: key, VersionId: id})
		if err != nil || !ret.Retention.RetainUntilDate.Equal(until) {
			t.Fatalf("round %d: retention %+v, %v, want until %s", round, ret, err, until)
		}
		tags, err := cl.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: bucket, Key: key, VersionId: id})
		if want := fmt.Sprint(round, "-", tagWrites-1); err != nil || len(tags.TagSet) != 1 || *tags.TagSet[0].Value != want {
			t.Fatalf("round %d: tags %+v, %v, want n=%s", round, tags, err, want)
		}
		if _, err := cl.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: bucket, Key: key, VersionId: id,
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
			LegalHold:         &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVersionedConditionalWrites: in a versioned bucket a write makes a
// new version, and its If-Match / If-None-Match are judged against the
// key's current version (none while a delete marker is the latest), for
// a PUT and for a multipart complete alike.
func TestVersionedConditionalWrites(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const bucket = "conditional"
	if err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.mc.EnableVersioning(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	put := func(key string, cond func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("v"))}
		cond(in)
		return cl.PutObject(ctx, in)
	}
	complete := func(key string, ifMatch, ifNoneMatch *string) error {
		up, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return err
		}
		part, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
		if err != nil {
			return err
		}
		_, err = cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: up.UploadId, IfMatch: ifMatch, IfNoneMatch: ifNoneMatch,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		return err
	}
	first, err := put("k", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatalf("If-None-Match on a new key: %v", err)
	}
	if _, err := put("k", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match over a current version: %v", err)
	}
	if err := complete("k", nil, aws.String("*")); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("complete with If-None-Match over a current version: %v", err)
	}
	if _, err := put("k", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123"`) }); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with another ETag: %v", err)
	}
	if _, err := put("k", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	if _, err := put("k", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); apiCode(err) != "NoSuchKey" {
		t.Fatalf("If-Match while a delete marker is the latest: %v", err)
	}
	if err := complete("k", nil, aws.String("*")); err != nil {
		t.Fatalf("complete with If-None-Match while a delete marker is the latest: %v", err)
	}
	out, err := cl.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Versions) != 3 || len(out.DeleteMarkers) != 1 {
		t.Fatalf("versions %d and markers %d, want 3 and 1: the refused writes must leave none", len(out.Versions), len(out.DeleteMarkers))
	}
}
