package object

import (
	"context"
	"errors"
	"testing"
)

// A rewrite gives the current version new headers without moving data:
// no shard is staged, every peer links its own files, the ETag,
// Last-Modified time and bytes stay, and the record is a newer version.
// With too few peers holding the version it copies the object instead;
// a failed If-Match changes nothing.
func TestRewriteObject(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{300, 3*testBlock + 7} {
		l, fc := newTestLayer(t)
		data := randBytes(uint64(size), size)
		before := put(t, l, "k", data)
		staged := func() (n int64) {
			for _, p := range fc.peers {
				n += p.stages.Load()
			}
			return n
		}
		rewrites := func() (n int64) {
			for _, p := range fc.peers {
				n += p.rewrites.Load()
			}
			return n
		}
		metas := func() (n int64) {
			for _, p := range fc.peers {
				n += p.metas.Load()
			}
			return n
		}
		stages := staged()
		m0 := metas()
		if _, err := l.HeadObject(ctx, testBucket, "k"); err != nil {
			t.Fatal(err)
		}
		m1 := metas()
		tags := map[string]string{"X-Amz-Tagging": "a=b"}
		if _, err := l.RewriteObject(ctx, testBucket, "k", PutOptions{Headers: tags, IfMatch: before.ETag}); err != nil {
			t.Fatal(err)
		}
		// Its If-Match is judged on the version it read, not on a second
		// read of the key's metadata.
		if head, rewrite := m1-m0, metas()-m1; rewrite != head {
			t.Fatalf("size %d: a rewrite read metadata %d times, a HEAD %d", size, rewrite, head)
		}
		after, err := l.HeadObject(ctx, testBucket, "k")
		if err != nil {
			t.Fatal(err)
		}
		if after.Headers["X-Amz-Tagging"] != "a=b" || after.ETag != before.ETag || !after.ModTime.Equal(before.ModTime) {
			t.Fatalf("size %d: after the rewrite %+v; before %+v", size, after, before)
		}
		if staged() != stages || rewrites() != 6 {
			t.Fatalf("size %d: %d shards staged, %d peer rewrites; want none staged, 6 rewrites", size, staged()-stages, rewrites())
		}
		mustGet(t, l, "k", data)

		if _, err := l.RewriteObject(ctx, testBucket, "k", PutOptions{IfMatch: "0123"}); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("size %d: rewrite with a failed If-Match: %v", size, err)
		}
		// Two peers lose their copy and a third fails its commits: the
		// rest make no write quorum, so the object is copied onto itself
		// (read from the four holders, committed on the five that can).
		rec, _ := fc.peerAt(testBucket, "k", 6, 0).ReadMeta(ctx, testBucket, "k")
		for i := range 2 {
			if err := fc.peerAt(testBucket, "k", 6, i).DropVersion(ctx, testBucket, "k", rec.Stamp); err != nil {
				t.Fatal(err)
			}
		}
		fc.peerAt(testBucket, "k", 6, 2).setFault(faultFailCommit)
		stages = staged()
		if _, err := l.RewriteObject(ctx, testBucket, "k", PutOptions{Headers: map[string]string{"X-Amz-Tagging": "c=d"}}); err != nil {
			t.Fatalf("size %d: rewrite of a degraded object: %v", size, err)
		}
		if got, err := l.HeadObject(ctx, testBucket, "k"); err != nil || got.Headers["X-Amz-Tagging"] != "c=d" {
			t.Fatalf("size %d: after the copy: %+v, %v", size, got, err)
		}
		if size > 300 && staged() == stages {
			t.Fatalf("size %d: no shard staged: the degraded object was not copied", size)
		}
		held := 0 // a write returns at its quorum; the last peer may follow
		for i := range 6 {
			if got, err := fc.peerAt(testBucket, "k", 6, i).ReadMeta(ctx, testBucket, "k"); err == nil && got.Headers["X-Amz-Tagging"] == "c=d" {
				held++
			}
		}
		if held < 4 {
			t.Fatalf("size %d: %d peers hold the copy", size, held)
		}
		fc.heal()
		mustGet(t, l, "k", data)
	}
}
