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
