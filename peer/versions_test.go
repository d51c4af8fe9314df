package peer

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"tessera/meta"
	"tessera/storage"
)

// TestVersionsOverTheWire: a peer's kept versions come back through
// ReadVersions, bytes and all, and a settle over the API drops them.
func TestVersionsOverTheWire(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	old := putObject(t, c, "bkt", "k", stamp(1, "gw"), []byte("old shard"))
	in := &meta.Object{Bucket: "bkt", Key: "k", Stamp: stamp(2, "gw"), Inlined: true, Inline: []byte("new"), Size: 3,
		Distribution: old.Distribution}
	if err := c.Commit(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	os, err := c.ReadVersions(ctx, "bkt", "k")
	if err != nil || len(os) != 2 || os[0].Stamp != in.Stamp || !bytes.Equal(os[0].Inline, in.Inline) || os[1].Stamp != old.Stamp {
		t.Fatalf("read versions: %v %+v", err, os)
	}
	rc, err := c.ReadShard(ctx, "bkt", "k", old.Stamp, 1, 0, -1)
	if err != nil {
		t.Fatalf("kept version's shard: %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "old shard" {
		t.Fatalf("kept version's shard: %q", b)
	}
	if err := c.Settle(ctx, "bkt", "k", in.Stamp); err != nil {
		t.Fatal(err)
	}
	if os, err := c.ReadVersions(ctx, "bkt", "k"); err != nil || len(os) != 1 {
		t.Fatalf("after the settle: %v, %d versions", err, len(os))
	}
	if _, err := c.ReadVersions(ctx, "bkt", "nope"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("read versions of a missing key: %v", err)
	}
	if err := c.Settle(ctx, "bkt", "k", meta.Stamp{}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("settle of a zero stamp: %v, want invalid", err)
	}
}

// TestTombstonesOverTheWire: a batch of tombstones commits in one call,
// and each key's refusal comes back as its own error, with the sentinel
// and the held stamp a single commit's answer carries.
func TestTombstonesOverTheWire(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	putObject(t, c, "bkt", "old", stamp(1, "gw"), []byte("old shard"))
	putObject(t, c, "bkt", "newer", stamp(9, "gw"), []byte("newer shard"))
	tomb := func(key string) *meta.Object {
		return &meta.Object{Bucket: "bkt", Key: key, Stamp: stamp(5, "gw"), Deleted: true}
	}
	errs, err := c.CommitTombstones(ctx, "bkt", []*meta.Object{tomb("old"), tomb("newer"), tomb("never")})
	if err != nil || len(errs) != 3 {
		t.Fatalf("commit tombstones: %v, %v", errs, err)
	}
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("tombstones over an older version and over nothing: %v, %v", errs[0], errs[2])
	}
	if held, ok := meta.HeldStamp(errs[1]); !errors.Is(errs[1], meta.ErrStale) || !ok || held != stamp(9, "gw") {
		t.Errorf("tombstone under a newer version: %v (held %v, %v)", errs[1], held, ok)
	}
	var re *RemoteError
	if !errors.As(errs[1], &re) || re.Status != 409 || re.Peer != c.id {
		t.Errorf("the refusal as a remote error: %#v", re)
	}
	for key, deleted := range map[string]bool{"old": true, "newer": false, "never": true} {
		if o, err := c.ReadMeta(ctx, "bkt", key); err != nil || o.Deleted != deleted {
			t.Errorf("%s after the batch: %+v, %v", key, o, err)
		}
	}
	if _, err := c.CommitTombstones(ctx, "nope", []*meta.Object{{Bucket: "nope", Key: "k", Stamp: stamp(5, "gw"), Deleted: true}}); !errors.Is(err, meta.ErrBucketNotFound) {
		t.Errorf("a batch for a missing bucket: %v", err)
	}
	if _, err := c.CommitTombstones(ctx, "bkt", []*meta.Object{tomb("a"), tomb("a")}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("a key twice: %v, want invalid", err)
	}
}
