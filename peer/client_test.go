package peer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tessera/meta"
	"tessera/objectlock"
	"tessera/storage"
)

func TestClientEndToEnd(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	if c.ID() != "p1" {
		t.Fatalf("id %q", c.ID())
	}
	mkBucket(t, c, "photos")
	mkBucket(t, c, "docs")
	bs, err := c.ListBuckets(ctx)
	if err != nil || len(bs) != 2 || bs[0].Name != "docs" || bs[1].Name != "photos" {
		t.Fatalf("list buckets: %v %+v", err, bs)
	}
	b, err := c.StatBucket(ctx, "photos")
	if err != nil || b.Name != "photos" || b.Created.Unix() != 100 {
		t.Fatalf("stat bucket: %v %+v", err, b)
	}

	key := "a/../b/日本 ?&=%#+.jpg"
	o := putObject(t, c, "photos", key, stamp(10, "gw/1"), []byte("shard one"), []byte("two"))
	got, err := c.ReadMeta(ctx, "photos", key)
	if err != nil || got.Key != key || got.Stamp != o.Stamp || len(got.Parts) != 2 || got.Distribution[0] != "p1" {
		t.Fatalf("read meta: %v %+v", err, got)
	}
	for _, tc := range []struct {
		part           int
		offset, length int64
		want           string
	}{{1, 0, -1, "shard one"}, {1, 6, 3, "one"}, {2, 0, 3, "two"}, {2, 3, 0, ""}} {
		rc, err := c.ReadShard(ctx, "photos", key, o.Stamp, tc.part, tc.offset, tc.length)
		if err != nil {
			t.Fatalf("read shard %+v: %v", tc, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != tc.want {
			t.Fatalf("read shard %+v: %v %q", tc, err, b)
		}
	}

	in := &meta.Object{Bucket: "photos", Key: "small", Stamp: stamp(11, "gw"), Inlined: true, Inline: []byte{0, 1, 2, 255}, Size: 4}
	if err := c.Commit(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	got, err = c.ReadMeta(ctx, "photos", "small")
	if err != nil || !bytes.Equal(got.Inline, in.Inline) || !got.Inlined {
		t.Fatalf("inline read: %v %+v", err, got)
	}
	tomb := &meta.Object{Bucket: "photos", Key: "zz", Stamp: stamp(12, "gw"), Deleted: true}
	if err := c.Commit(ctx, tomb, nil); err != nil {
		t.Fatal(err)
	}
	ents, err := c.List(ctx, "photos", "", "", 0, "")
	if err != nil || len(ents) != 3 || ents[0].Key != key || ents[1].Key != "small" || !ents[2].Deleted {
		t.Fatalf("list: %v %+v", err, ents)
	}
	if ents, err := c.List(ctx, "photos", "a/", key, 10, ""); err != nil || len(ents) != 0 {
		t.Fatalf("list after: %v %+v", err, ents)
	}
	if ents, err := c.List(ctx, "photos", "", "", 1, ""); err != nil || len(ents) != 1 || ents[0].Key != key {
		t.Fatalf("list limit: %v %+v", err, ents)
	}
	tomb2 := &meta.Object{Bucket: "photos", Key: "a\x00b", Stamp: stamp(11, "gw"), Deleted: true}
	if err := c.Commit(ctx, tomb2, nil); err != nil {
		t.Fatal(err)
	}
	if ents, err := c.ListTombstones(ctx, "photos", time.Unix(0, 100), meta.Entry{}, 1); err != nil || len(ents) != 1 ||
		ents[0].Key != tomb2.Key || ents[0].Stamp != tomb2.Stamp || !ents[0].Deleted {
		t.Fatalf("list tombstones: %v %+v", err, ents)
	}
	if ents, err := c.ListTombstones(ctx, "photos", time.Unix(0, 100), meta.EntryOf(tomb2), 10); err != nil || len(ents) != 1 || ents[0].Key != "zz" {
		t.Fatalf("list tombstones after the first: %v %+v", err, ents)
	}
	if ents, err := c.ListTombstones(ctx, "photos", time.Unix(0, 12), meta.Entry{}, 10); err != nil || len(ents) != 1 {
		t.Fatalf("list tombstones before 12: %v %+v", err, ents)
	}
	if _, err := c.ListTombstones(ctx, "nope", time.Unix(0, 100), meta.Entry{}, 10); !errors.Is(err, meta.ErrBucketNotFound) {
		t.Fatalf("list tombstones of a missing bucket: %v", err)
	}

	// Multipart.
	u := &meta.Upload{Bucket: "docs", Key: "big", UploadID: "up-1", Code: meta.Code{K: 1}}
	if err := c.PutUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	for n, data := range []string{"alpha", "beta"} {
		id, err := c.StageShard(ctx, strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CommitPart(ctx, "docs", "big", "up-1", meta.Part{Number: n + 1, Size: int64(len(data)), ETag: data}, id); err != nil {
			t.Fatal(err)
		}
	}
	gu, err := c.GetUpload(ctx, "docs", "big", "up-1")
	if err != nil || len(gu.Parts) != 2 || gu.Parts[1].ETag != "beta" || gu.UploadID != "up-1" {
		t.Fatalf("get upload: %v %+v", err, gu)
	}
	fin := &meta.Object{Bucket: "docs", Key: "big", Stamp: stamp(20, "gw"), Parts: gu.Parts}
	if err := c.CompleteUpload(ctx, fin, "up-1"); err != nil {
		t.Fatal(err)
	}
	rc, err := c.ReadShard(ctx, "docs", "big", fin.Stamp, 2, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); string(b) != "beta" {
		t.Fatalf("completed part 2: %q", b)
	}
	rc.Close()
	if err := c.PutUpload(ctx, &meta.Upload{Bucket: "docs", Key: "other", UploadID: "up-2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortUpload(ctx, "docs", "other", "up-2"); err != nil {
		t.Fatal(err)
	}

	// Delete: the tombstone does not keep a bucket alive, objects do.
	mkBucket(t, c, "empty")
	if err := c.Commit(ctx, &meta.Object{Bucket: "empty", Key: "k", Stamp: stamp(1, "w"), Deleted: true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteBucket(ctx, "empty"); err != nil {
		t.Fatalf("delete bucket: %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	o := putObject(t, c, "bkt", "k", stamp(5, "w"), []byte("data"))
	if err := c.PutUpload(ctx, &meta.Upload{Bucket: "bkt", Key: "u", UploadID: "u1"}); err != nil {
		t.Fatal(err)
	}
	staleO := *o
	staleO.Stamp = stamp(4, "w")
	staleO.Parts = nil
	staleO.Deleted = true
	id, _ := c.StageShard(ctx, strings.NewReader("x"))
	// A version under a compliance retention: no peer call deletes it.
	locked := &meta.Object{Bucket: "bkt", Key: "locked", Stamp: stamp(5, "w"), Code: meta.Code{K: 1},
		Inlined: true, Inline: []byte("x"), Size: 1, Headers: map[string]string{}}
	objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: time.Now().Add(time.Hour)}}.Apply(locked.Headers)
	if err := c.Commit(ctx, locked, nil); err != nil {
		t.Fatal(err)
	}
	// Under a governance retention: only a tombstone carrying the bypass.
	gov := &meta.Object{Bucket: "bkt", Key: "gov", Stamp: stamp(5, "w"), Code: meta.Code{K: 1},
		Inlined: true, Inline: []byte("x"), Size: 1, Headers: map[string]string{}}
	objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Governance, Until: time.Now().Add(time.Hour)}}.Apply(gov.Headers)
	if err := c.Commit(ctx, gov, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		call   func() error
		want   error
		status int
	}{
		{"object not found", func() error { _, err := c.ReadMeta(ctx, "bkt", "nope"); return err }, meta.ErrNotFound, 404},
		{"bucket not found", func() error { _, err := c.StatBucket(ctx, "nope"); return err }, meta.ErrBucketNotFound, 404},
		{"list missing bucket", func() error { _, err := c.List(ctx, "nope", "", "", 0, ""); return err }, meta.ErrBucketNotFound, 404},
		{"bucket exists", func() error { return c.MakeBucket(ctx, meta.Bucket{Name: "bkt"}) }, meta.ErrBucketExists, 409},
		{"bucket not empty", func() error { return c.DeleteBucket(ctx, "bkt") }, meta.ErrBucketNotEmpty, 409},
		{"stale", func() error { return c.Commit(ctx, &staleO, nil) }, meta.ErrStale, 409},
		{"object locked", func() error {
			return c.Commit(ctx, &meta.Object{Bucket: "bkt", Key: "locked", Stamp: stamp(6, "w"), Deleted: true}, nil)
		}, meta.ErrObjectLocked, 403},
		{"object locked, governance without the bypass", func() error {
			return c.Commit(ctx, &meta.Object{Bucket: "bkt", Key: "gov", Stamp: stamp(6, "w"), Deleted: true}, nil)
		}, meta.ErrObjectLocked, 403},
		{"object locked, a same-version repair lifting it", func() error {
			unlocked := *locked
			unlocked.Headers = map[string]string{}
			return c.RepairCommit(ctx, &unlocked, nil)
		}, meta.ErrObjectLocked, 403},
		{"object locked, a drop of the version", func() error {
			return c.DropVersion(ctx, "bkt", "locked", locked.Stamp)
		}, meta.ErrObjectLocked, 403},
		{"object locked, a rewrite lifting it", func() error {
			unlocked := *locked
			unlocked.Stamp, unlocked.Headers, unlocked.Inline = stamp(7, "w"), map[string]string{}, nil
			return c.Rewrite(ctx, &unlocked, locked.Stamp)
		}, meta.ErrObjectLocked, 403},
		{"rewrite of a version not held", func() error {
			next := *locked
			next.Stamp, next.Inline = stamp(7, "w"), nil
			return c.Rewrite(ctx, &next, stamp(4, "w"))
		}, meta.ErrStale, 409},
		{"upload not found", func() error { _, err := c.GetUpload(ctx, "bkt", "u", "u2"); return err }, meta.ErrUploadNotFound, 404},
		{"abort missing upload", func() error { return c.AbortUpload(ctx, "bkt", "u", "u2") }, meta.ErrUploadNotFound, 404},
		{"shard not found", func() error { _, err := c.ReadShard(ctx, "bkt", "k", stamp(6, "w"), 1, 0, -1); return err }, meta.ErrNotFound, 404},
		{"shard range past end", func() error { _, err := c.ReadShard(ctx, "bkt", "k", o.Stamp, 1, 2, 10); return err }, meta.ErrCorrupt, 422},
		{"staged not found", func() error {
			return c.CommitPart(ctx, "bkt", "u", "u1", meta.Part{Number: 1}, "6f1c2a3e-0000-4000-8000-000000000000")
		}, storage.ErrStagedNotFound, 404},
		{"invalid part", func() error {
			return c.CompleteUpload(ctx, &meta.Object{Bucket: "bkt", Key: "u", Stamp: stamp(9, "w"), Parts: []meta.Part{{Number: 3}}}, "u1")
		}, storage.ErrInvalidPart, 400},
		{"bad bucket name", func() error { _, err := c.StatBucket(ctx, "../etc"); return err }, storage.ErrInvalidArgument, 400},
		{"bad upload id", func() error { return c.AbortUpload(ctx, "bkt", "u", "../../x") }, storage.ErrInvalidArgument, 400},
		{"bad staged id", func() error { return c.CommitPart(ctx, "bkt", "u", "u1", meta.Part{Number: 1}, "../x") }, storage.ErrInvalidArgument, 400},
		{"commit without staged", func() error {
			return c.Commit(ctx, &meta.Object{Bucket: "bkt", Key: "n", Stamp: stamp(1, "w"), Parts: []meta.Part{{Number: 1}}}, nil)
		}, storage.ErrInvalidArgument, 400},
		{"commit into missing bucket", func() error {
			return c.Commit(ctx, &meta.Object{Bucket: "nope", Key: "n", Stamp: stamp(1, "w"), Parts: []meta.Part{{Number: 1}}}, []string{id})
		}, meta.ErrBucketNotFound, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var re *RemoteError
			if !errors.As(err, &re) || re.Status != tc.status || re.Peer != "p1" {
				t.Fatalf("remote error %+v, want status %d", re, tc.status)
			}
		})
	}
	// The bypass travels in the record over the wire.
	tomb := &meta.Object{Bucket: "bkt", Key: "gov", Stamp: stamp(8, "w"), Deleted: true,
		Headers: objectlock.BypassMark()}
	if err := c.Commit(ctx, tomb, nil); err != nil {
		t.Fatalf("governance delete with the bypass: %v", err)
	}
}

func TestCorruptRecordOnPeer(t *testing.T) {
	p := newPeer(t, nil)
	mkBucket(t, p.client, "bkt")
	putObject(t, p.client, "bkt", "k", stamp(1, "w"), []byte("x"))
	// Damage the record in the store's index.
	if err := p.store.DamageRecord("bkt", "k", func(n int) int { return n / 2 }); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.ReadMeta(ctx, "bkt", "k"); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("corrupt record: %v", err)
	}
}

func TestUnknownRouteAndCodes(t *testing.T) {
	p := newPeer(t, nil)
	for _, tc := range []struct{ method, target string }{{"GET", "/v1/nope"}, {"PATCH", "/v1/bucket?bucket=abc"}, {"GET", "/"}} {
		req := rawRequest(t, p.srv.URL, tc.method, tc.target, nil, deriveKey(secret), timeNow())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 4 {
			t.Fatalf("%s %s: %d", tc.method, tc.target, resp.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	for _, c := range codes {
		if sentinelOf(c.code) != c.err {
			t.Errorf("code %s does not map back", c.code)
		}
		if got, _ := codeOf(fmt.Errorf("wrapped: %w", c.err)); got != c.code {
			t.Errorf("%v maps to %s, want %s", c.err, got, c.code)
		}
	}
	if got, status := codeOf(errors.New("disk on fire")); got != codeInternal || status != 500 {
		t.Errorf("unknown error: %s %d", got, status)
	}
}

// A stale refusal names the stamp the peer holds, so a writer whose clock
// is behind can stamp its retry above it; the staged shard stays for it.
func TestStaleRefusalNamesHeldStamp(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	held := putObject(t, c, "bkt", "k", stamp(50, "a"), []byte("newer")).Stamp
	id, err := c.StageShard(ctx, strings.NewReader("older"))
	if err != nil {
		t.Fatal(err)
	}
	o := &meta.Object{Bucket: "bkt", Key: "k", Stamp: stamp(40, "b"), Size: 5, Code: meta.Code{K: 1},
		Parts: []meta.Part{{Number: 1, Size: 5}}, Distribution: []meta.PeerID{"p1"}}
	err = c.Commit(ctx, o, []string{id})
	got, ok := meta.HeldStamp(err)
	if !errors.Is(err, meta.ErrStale) || !ok || got != held {
		t.Fatalf("commit under %v: err %v, held %v %v; want ErrStale naming %v", held, err, got, ok, held)
	}
	o.Stamp = stamp(held.Nanos+1, "b")
	if err := c.Commit(ctx, o, []string{id}); err != nil {
		t.Fatalf("retry above the held stamp with the same staged shard: %v", err)
	}
}

// A rewrite over the shard API sends only the record: the peer makes the
// new version from its own shard files, which read back under the new
// stamp with the new headers.
func TestRewriteOverTheWire(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	o := putObject(t, c, "bkt", "k", stamp(5, "w"), []byte("alpha"), []byte("beta"))
	next := *o
	next.Stamp, next.Headers = stamp(9, "w"), map[string]string{"X-Amz-Tagging": "a=b"}
	if err := c.Rewrite(ctx, &next, o.Stamp); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadMeta(ctx, "bkt", "k")
	if err != nil || got.Stamp != next.Stamp || got.Headers["X-Amz-Tagging"] != "a=b" {
		t.Fatalf("after the rewrite: %+v, %v", got, err)
	}
	for i, want := range []string{"alpha", "beta"} {
		rc, err := c.ReadShard(ctx, "bkt", "k", next.Stamp, i+1, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != want {
			t.Fatalf("part %d under the new stamp: %q", i+1, b)
		}
	}
}
