package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"
)

// TestLifecycleExpires: lifecycle rules set with aws-sdk-go-v2 (and read
// back with minio-go) expire exactly the objects they name, tag filters
// included, and abort the incomplete uploads they name, within a few
// lifecycle days (shortened to one second); everything else stays
// byte-exact.
func TestLifecycleExpires(t *testing.T) {
	t.Setenv("TESSERA_LIFECYCLE_DAY", "1s")
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const bucket = "logs"
	if err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string, data []byte) {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		if _, err := cl.PutObject(ctx, in); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	kept := map[string][]byte{}
	for i := range 5 {
		put(fmt.Sprintf("app/%d.log", i), "", []byte("expires"))
		k := fmt.Sprintf("keep/%d", i)
		kept[k] = payload(int64(i), 1000+i*300_000) // inlined and erasure-coded
		put(k, "", kept[k])
	}
	put("tmp/tagged", "tmp=yes", []byte("expires"))
	kept["tmp/untagged"] = []byte("stays")
	put("tmp/untagged", "", kept["tmp/untagged"])
	kept["tmp/other-tag"] = []byte("stays")
	put("tmp/other-tag", "tmp=no", kept["tmp/other-tag"])
	if _, err := c.core.NewMultipartUpload(ctx, bucket, "uploads/stale", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := c.core.NewMultipartUpload(ctx, bucket, "keep/upload", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	one := aws.Int32(1)
	_, err = cl.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("app logs"), Status: types.ExpirationStatusEnabled,
				Filter: &types.LifecycleRuleFilter{Prefix: aws.String("app/")}, Expiration: &types.LifecycleExpiration{Days: one}},
			{ID: aws.String("temporary"), Status: types.ExpirationStatusEnabled,
				Filter:     &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("tmp"), Value: aws.String("yes")}},
				Expiration: &types.LifecycleExpiration{Days: one}},
			{ID: aws.String("uploads"), Status: types.ExpirationStatusEnabled,
				Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("uploads/")},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: one}},
			{ID: aws.String("off"), Status: types.ExpirationStatusDisabled,
				Filter: &types.LifecycleRuleFilter{Prefix: aws.String("keep/")}, Expiration: &types.LifecycleExpiration{Days: one}},
		}}})
	if err != nil {
		t.Fatalf("PutBucketLifecycleConfiguration: %v", err)
	}
	set := time.Now()
	lc, err := c.mc.GetBucketLifecycle(ctx, bucket)
	if err != nil || len(lc.Rules) != 4 || lc.Rules[0].ID != "app logs" || lc.Rules[0].Expiration.Days != 1 {
		t.Fatalf("minio-go GetBucketLifecycle: %+v, %v", lc, err)
	}

	waitUntil(t, 30*time.Second, "the named objects and upload expired", func() bool {
		var keys []string
		for o := range c.mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
			keys = append(keys, o.Key)
		}
		ups, err := c.core.ListMultipartUploads(ctx, bucket, "uploads/", "", "", "", 100)
		return err == nil && len(ups.Uploads) == 0 && len(keys) == len(kept)
	})
	t.Logf("expired %.1f s after the rules were set", time.Since(set).Seconds())
	for k, want := range kept {
		o, err := c.mc.GetObject(ctx, bucket, k, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o)
		o.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after expiry: %d bytes, %v; want %d bytes as written", k, len(got), err, len(want))
		}
	}
	ups, err := c.core.ListMultipartUploads(ctx, bucket, "keep/", "", "", "", 100)
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != other {
		t.Fatalf("the upload outside the rule: %+v, %v", ups, err)
	}
	if st := c.srv.Gateway().LifecycleStats(); st.Expired != 6 || st.Aborted != 1 || st.Errors != 0 {
		t.Fatalf("worker stats %+v, want 6 expired, 1 aborted, no errors", st)
	}

	// Deleting the rules stops expiry.
	if _, err := cl.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.mc.GetBucketLifecycle(ctx, bucket); minio.ToErrorResponse(err).Code != "NoSuchLifecycleConfiguration" {
		t.Fatalf("GetBucketLifecycle after delete: %v, want NoSuchLifecycleConfiguration", err)
	}
	put("app/late.log", "", []byte("stays now"))
	time.Sleep(3 * time.Second)
	if _, err := c.mc.StatObject(ctx, bucket, "app/late.log", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("an object written after the rules were deleted: %v", err)
	}
}

// TestLifecycleGatewayKilled: two gateway processes share the buckets'
// lifecycle work; one is killed (SIGKILL) while expiring, and the other
// takes its buckets over: every object the rules name expires, every
// other object stays byte-exact.
func TestLifecycleGatewayKilled(t *testing.T) { lifecycleGatewayKilled(t, false) }

// TestLifecycleGatewayKilledVersioned is TestLifecycleGatewayKilled on
// versioned buckets, where an expiry writes a delete marker: every named
// key ends with exactly one marker over its one version (the marker is
// written once, whichever gateway got to it), and nothing else changes.
func TestLifecycleGatewayKilledVersioned(t *testing.T) { lifecycleGatewayKilled(t, true) }

func lifecycleGatewayKilled(t *testing.T, versioned bool) {
	needFull(t)
	t.Setenv("TESSERA_LIFECYCLE_DAY", "2s")
	c, a, ma, mb := startTwoGateways(t)
	ctx := context.Background()
	const buckets, expiring = 8, 100
	var sets []*objectSet
	for i := range buckets {
		name := fmt.Sprintf("lc%d", i)
		makeBucketSoon(t, ma, name)
		if versioned {
			if err := ma.EnableVersioning(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		for j := range expiring {
			key := fmt.Sprintf("exp/%03d", j)
			if _, err := ma.PutObject(ctx, name, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		set := newObjectSet(name)
		for j := range 3 {
			set.put(ctx, t, ma, fmt.Sprintf("keep/%d", j), int64(i*10+j))
		}
		sets = append(sets, set)
	}
	remaining := func() int {
		n := 0
		for i := range buckets {
			for o := range mb.ListObjects(ctx, fmt.Sprintf("lc%d", i), minio.ListObjectsOptions{Prefix: "exp/", Recursive: true}) {
				if o.Err == nil {
					n++
				}
			}
		}
		return n
	}
	lc := &lifecycle.Configuration{Rules: []lifecycle.Rule{{ID: "exp", Status: "Enabled",
		RuleFilter: lifecycle.Filter{Prefix: "exp/"}, Expiration: lifecycle.Expiration{Days: 1}}}}
	for i := range buckets {
		if err := ma.SetBucketLifecycle(ctx, fmt.Sprintf("lc%d", i), lc); err != nil {
			t.Fatalf("SetBucketLifecycle: %v", err)
		}
	}
	total := buckets * expiring
	waitUntil(t, 60*time.Second, "expiry under way", func() bool { return remaining() < total })
	c.kill(a)
	left := remaining()
	killed := time.Now()
	t.Logf("gateway1 killed with %d of %d objects left to expire", left, total)
	waitUntil(t, 120*time.Second, "every named object expired through the surviving gateway", func() bool { return remaining() == 0 })
	t.Logf("the rest expired %.1f s after the kill", time.Since(killed).Seconds())
	for _, set := range sets {
		set.verify(ctx, t, mb)
	}
	if versioned {
		checkOneMarkerEach(ctx, t, mb, buckets, expiring)
	}
}

// checkOneMarkerEach checks that every exp/ key of buckets lc0.. holds
// its one version and exactly one delete marker over it.
func checkOneMarkerEach(ctx context.Context, t *testing.T, mc *minio.Client, buckets, expiring int) {
	t.Helper()
	for i := range buckets {
		name := fmt.Sprintf("lc%d", i)
		markers, versions := map[string]int{}, map[string]int{}
		latestMarker := map[string]bool{}
		for o := range mc.ListObjects(ctx, name, minio.ListObjectsOptions{Prefix: "exp/", Recursive: true, WithVersions: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if o.IsDeleteMarker {
				markers[o.Key]++
				latestMarker[o.Key] = latestMarker[o.Key] || o.IsLatest
			} else {
				versions[o.Key]++
			}
		}
		if len(versions) != expiring {
			t.Errorf("%s: %d keys with a version, want %d", name, len(versions), expiring)
		}
		for k, n := range versions {
			if n != 1 || markers[k] != 1 || !latestMarker[k] {
				t.Errorf("%s/%s: %d versions, %d delete markers (latest %v), want 1, 1 and the marker latest", name, k, n, markers[k], latestMarker[k])
			}
		}
	}
}

// TestLifecycleVersioned: in a versioned bucket an expiry rule writes a
// delete marker over the current version, the noncurrent versions beyond
// the newest one kept go once their day has passed, a lone expired
// marker goes, and a version under legal hold stays.
func TestLifecycleVersioned(t *testing.T) {
	t.Setenv("TESSERA_LIFECYCLE_DAY", "1s")
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	bucket := aws.String("history")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, data []byte, hold bool) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		if hold {
			in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn
		}
		out, err := cl.PutObject(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return *out.VersionId
	}
	var ids []string
	for i := range 3 {
		ids = append(ids, put("logs/app.log", payload(int64(i), 1000+i*200_000), false))
	}
	held := put("keep/held", []byte("held"), true)
	middle := put("keep/held", []byte("newer"), false)
	newest := put("keep/held", []byte("newest"), false)
	if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String("gone/x")}); err != nil {
		t.Fatal(err)
	}
	one := aws.Int32(1)
	_, err := cl.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: bucket,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("logs"), Status: types.ExpirationStatusEnabled,
				Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")}, Expiration: &types.LifecycleExpiration{Days: one}},
			{ID: aws.String("history"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
				NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: one, NewerNoncurrentVersions: one}},
			{ID: aws.String("markers"), Status: types.ExpirationStatusEnabled,
				Filter: &types.LifecycleRuleFilter{Prefix: aws.String("gone/")}, Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	versions := func() (lines []string) {
		out, err := cl.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.DeleteMarkers {
			lines = append(lines, *m.Key+" marker")
		}
		for _, v := range out.Versions {
			lines = append(lines, *v.Key+" "+*v.VersionId)
		}
		return lines
	}
	// logs/app.log: a marker over ids[2], which is kept as the newest
	// noncurrent version; ids[1] and ids[0] go. keep/held: the middle
	// version is its newest noncurrent one, kept; the held one is past
	// NewerNoncurrentVersions but stays. gone/x's lone marker goes.
	want := fmt.Sprint([]string{"logs/app.log marker", "keep/held " + newest, "keep/held " + middle, "keep/held " + held, "logs/app.log " + ids[2]})
	var got []string
	waitFor(t, 20*time.Second, "versioned lifecycle settled", func() error {
		if got = versions(); fmt.Sprint(got) != want {
			return fmt.Errorf("versions %q, want %s", got, want)
		}
		return nil
	})
	// Nothing more goes in the passes that follow.
	time.Sleep(3 * time.Second)
	if fmt.Sprint(versions()) != want {
		t.Fatalf("versions went on changing: %q, want %s", versions(), want)
	}
	if got := readVersion(ctx, t, c, *bucket, "logs/app.log", ids[2]); !bytes.Equal(got, payload(2, 1000+2*200_000)) {
		t.Fatal("the kept noncurrent version changed")
	}
}
