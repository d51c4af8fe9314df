package storage

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// A rewrite makes a new version of the same data with other headers: the
// shard files are linked, not copied, the new version reads the same
// bytes, the old one is kept until settled, and a record that describes
// other data, names a version the peer does not hold as current, or lifts
// a lock is refused without changing anything.
func TestRewrite(t *testing.T) {
	s := newStore(t)
	p1, p2 := bytes.Repeat([]byte("a"), 1000), []byte("second part")
	if err := put(t, s, "bkt", "k", stamp(10, "w"), p1, p2); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, inlined("bkt", "small", stamp(10, "w"), []byte("tiny")), nil); err != nil {
		t.Fatal(err)
	}
	tagged := func(key string, st meta.Stamp, parts ...[]byte) *meta.Object {
		o := object("bkt", key, st, parts...)
		o.ETag = "etag-10"
		o.Headers = meta.Strings{"X-Amz-Tagging": "a=b"}
		return o
	}
	next := tagged("k", stamp(20, "w"), p1, p2)
	if err := s.Rewrite(ctx, next, stamp(10, "w")); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadMeta(ctx, "bkt", "k")
	if err != nil || got.Stamp != stamp(20, "w") || got.Headers["X-Amz-Tagging"] != "a=b" {
		t.Fatalf("after the rewrite: %+v, %v", got, err)
	}
	for i, want := range [][]byte{p1, p2} {
		for _, st := range []meta.Stamp{stamp(20, "w"), stamp(10, "w")} { // the old version is kept
			if b, err := readShard(t, s, "bkt", "k", st, i+1); err != nil || !bytes.Equal(b, want) {
				t.Fatalf("part %d of %v: %q, %v", i+1, st, b, err)
			}
		}
	}
	a, _ := os.Stat(s.objDir("bkt", "k") + "/" + dataDirName(stamp(10, "w")) + "/" + partFileName(1))
	b, _ := os.Stat(s.objDir("bkt", "k") + "/" + dataDirName(stamp(20, "w")) + "/" + partFileName(1))
	if a == nil || b == nil || !os.SameFile(a, b) {
		t.Fatal("the new version's shard file is not the old one's")
	}
	small := tagged("small", stamp(20, "w"), []byte("tiny"))
	small.Inlined = true // no bytes sent: the peer keeps its own
	if err := s.Rewrite(ctx, small, stamp(10, "w")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadMeta(ctx, "bkt", "small"); err != nil || string(got.Inline) != "tiny" || got.Stamp != stamp(20, "w") {
		t.Fatalf("inlined after the rewrite: %+v, %v", got, err)
	}

	refused := []struct {
		name string
		o    *meta.Object
		from meta.Stamp
		want error
	}{
		{"other size", tagged("k", stamp(30, "w"), p1), stamp(20, "w"), ErrInvalidArgument},
		{"other shard", func() *meta.Object { o := tagged("k", stamp(30, "w"), p1, p2); o.ShardIndex = 1; return o }(), stamp(20, "w"), ErrInvalidArgument},
		{"a version no longer current", tagged("k", stamp(30, "w"), p1, p2), stamp(10, "w"), meta.ErrStale},
		{"a version the peer lacks", tagged("k", stamp(30, "w"), p1, p2), stamp(25, "w"), meta.ErrNotFound},
		{"a stamp not newer", tagged("k", stamp(20, "w"), p1, p2), stamp(20, "w"), meta.ErrStale},
		{"a deletion", object("bkt", "k", stamp(30, "w")), stamp(20, "w"), ErrInvalidArgument},
		{"a key without a record", tagged("none", stamp(30, "w"), p1), stamp(20, "w"), meta.ErrNotFound},
	}
	for _, c := range refused {
		if err := s.Rewrite(ctx, c.o, c.from); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got, _ := s.ReadMeta(ctx, "bkt", "k"); got.Stamp != stamp(20, "w") {
		t.Fatalf("a refused rewrite changed the record to %v", got.Stamp)
	}
}

// A rewrite is held to the version's object lock as any write is: a
// compliance retention cannot be shortened or a legal hold lifted by one,
// and extending the retention can.
func TestRewriteUnderObjectLock(t *testing.T) {
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newStoreAt(t, time.Hour, clock.now)
	until := clock.now().Add(time.Hour)
	with := func(st meta.Stamp, lock objectlock.State) *meta.Object {
		o := object("bkt", "k", stamp(10, "w"), []byte("data"))
		o.Stamp = st
		o.Headers = meta.Strings{}
		lock.Apply(o.Headers)
		return o
	}
	comp := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until}}
	if err := s.Commit(ctx, with(stamp(10, "w"), comp), []string{stage(t, s, []byte("data"))}); err != nil {
		t.Fatal(err)
	}
	shorter := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until.Add(-time.Minute)}}
	if err := s.Rewrite(ctx, with(stamp(20, "w"), shorter), stamp(10, "w")); !errors.Is(err, meta.ErrObjectLocked) {
		t.Fatalf("shortened by a rewrite: %v", err)
	}
	longer := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until.Add(time.Hour)}}
	if err := s.Rewrite(ctx, with(stamp(20, "w"), longer), stamp(10, "w")); err != nil {
		t.Fatalf("extended by a rewrite: %v", err)
	}
}
