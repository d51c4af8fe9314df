package object

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"tessera/meta"
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
		if _, err := l.RewriteObject(ctx, testBucket, "k", setTo(PutOptions{Headers: tags, IfMatch: before.ETag})); err != nil {
			t.Fatal(err)
		}
		// Its If-Match is judged on the version it read, not on a second
		// read of the key's metadata: at most one read per peer (a read
		// asks k peers or more, so two reads would be at least 2k).
		if rewrite := metas() - m1; rewrite > int64(len(fc.peers)) {
			t.Fatalf("size %d: a rewrite read metadata %d times (a HEAD %d)", size, rewrite, m1-m0)
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

		if _, err := l.RewriteObject(ctx, testBucket, "k", setTo(PutOptions{IfMatch: "0123"})); !errors.Is(err, ErrPreconditionFailed) {
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
		if _, err := l.RewriteObject(ctx, testBucket, "k", setTo(PutOptions{Headers: map[string]string{"X-Amz-Tagging": "c=d"}})); err != nil {
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

// setTo is an Edit that sets opts whatever the version holds.
func setTo(opts PutOptions) Edit {
	return func(ObjectInfo) (PutOptions, error) { return opts, nil }
}

// withHeader is an Edit that adds one header to what the version holds.
func withHeader(name, value string) Edit {
	return func(cur ObjectInfo) (PutOptions, error) {
		h := maps.Clone(cur.Headers)
		if h == nil {
			h = map[string]string{}
		}
		h[name] = value
		return PutOptions{ContentType: cur.ContentType, UserMeta: cur.UserMeta, Headers: h}, nil
	}
}

// A change committed through another gateway between a rewrite's read
// and its commit makes the peers refuse the rewrite, which then edits the
// version as it now is: both changes stay (a tag change racing a legal
// hold keeps the hold). Rewrites through one gateway take turns, so
// concurrent ones all stay too. An edit's error stops the rewrite with
// nothing written.
func TestRewriteEditsTheCurrentVersion(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{300, 3*testBlock + 7} {
		l, fc := newTestLayer(t)
		other := layerOn(t, fc, func(c *Config) { c.WriterID = "gw2" })
		data := randBytes(uint64(size), size)
		put(t, l, "k", data)
		calls := 0
		tag := withHeader("X-Amz-Tagging", "a=b")
		edit := func(cur ObjectInfo) (PutOptions, error) {
			calls++
			if calls == 1 {
				// Another change lands after this rewrite read the version.
				if _, err := other.RewriteObject(ctx, testBucket, "k", withHeader("X-Amz-Object-Lock-Legal-Hold", "ON")); err != nil {
					t.Fatal(err)
				}
			}
			return tag(cur)
		}
		if _, err := l.RewriteObject(ctx, testBucket, "k", edit); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		got, err := l.HeadObject(ctx, testBucket, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got.Headers["X-Amz-Object-Lock-Legal-Hold"] != "ON" || got.Headers["X-Amz-Tagging"] != "a=b" || calls != 2 {
			t.Fatalf("size %d: headers %v after %d edits; want the hold and the tags after 2", size, got.Headers, calls)
		}
		mustGet(t, l, "k", data)

		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if _, err := l.RewriteObject(ctx, testBucket, "k", withHeader(fmt.Sprintf("X-Concurrent-%d", i), "1")); err != nil {
					t.Errorf("size %d: concurrent rewrite %d: %v", size, i, err)
				}
			})
		}
		wg.Wait()
		got, err = l.HeadObject(ctx, testBucket, "k")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if got.Headers[fmt.Sprintf("X-Concurrent-%d", i)] != "1" {
				t.Fatalf("size %d: concurrent change %d lost: %v", size, i, got.Headers)
			}
		}

		stop := errors.New("refused")
		if _, err := l.RewriteObject(ctx, testBucket, "k", func(ObjectInfo) (PutOptions, error) { return PutOptions{}, stop }); !errors.Is(err, stop) {
			t.Fatalf("size %d: an edit's refusal: %v", size, err)
		}
		if after, _ := l.HeadObject(ctx, testBucket, "k"); !maps.Equal(after.Headers, got.Headers) {
			t.Fatalf("size %d: a refused edit changed the headers to %v", size, after.Headers)
		}
	}
}

// A rewrite that fell short of its quorum leaves newer records on some
// peers that never became current; they refuse every later rewrite of the
// version, which then copies the object onto itself instead of failing
// for good.
func TestRewritePastAFailedRewrite(t *testing.T) {
	ctx := context.Background()
	l, fc := newTestLayer(t)
	data := randBytes(7, 3*testBlock+7)
	put(t, l, "k", data)
	cur, err := fc.peerAt(testBucket, "k", 6, 0).ReadMeta(ctx, testBucket, "k")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // three copies: short of the write quorum
		p := fc.peerAt(testBucket, "k", 6, i)
		rec, err := p.ReadMeta(ctx, testBucket, "k")
		if err != nil {
			t.Fatal(err)
		}
		left := *rec
		left.Stamp = meta.Stamp{Nanos: cur.Stamp.Nanos + 1, Writer: "gw9"}
		left.Headers = map[string]string{"X-Amz-Tagging": "lost=1"}
		if err := p.Rewrite(ctx, &left, cur.Stamp); err != nil {
			t.Fatal(err)
		}
	}
	if info, err := l.HeadObject(ctx, testBucket, "k"); err != nil || info.Headers["X-Amz-Tagging"] != "" {
		t.Fatalf("the failed rewrite is current: %+v, %v", info, err)
	}
	rewrites := func() (n int64) {
		for _, p := range fc.peers {
			n += p.rewrites.Load()
		}
		return n
	}
	before := rewrites()
	if _, err := l.RewriteObject(ctx, testBucket, "k", withHeader("X-Amz-Tagging", "a=b")); err != nil {
		t.Fatalf("rewrite past the leftovers: %v", err)
	}
	// One rewrite call per peer: a stale refusal of a rewrite is not
	// sent again under a new stamp (the version it names stays the same),
	// the version is read again and then copied.
	if n := rewrites() - before; n != 6 {
		t.Fatalf("%d peer rewrite calls, want 6", n)
	}
	if info, err := l.HeadObject(ctx, testBucket, "k"); err != nil || info.Headers["X-Amz-Tagging"] != "a=b" {
		t.Fatalf("after the rewrite: %+v, %v", info, err)
	}
	mustGet(t, l, "k", data)
}
