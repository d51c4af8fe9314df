package storage

import (
	"errors"
	"testing"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// A batch of tombstones is decided key by key as Commit decides each one,
// and lands in one write: a refused key changes nothing, the others are
// deleted, and each replaced version stays kept until it is settled.
func TestCommitTombstones(t *testing.T) {
	s := newStore(t)
	for _, key := range []string{"data", "inline", "newer"} {
		if err := put(t, s, "bkt", key, stamp(10, "w"), []byte("shard of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, inlined("bkt", "inline", stamp(11, "w"), []byte("small")), nil); err != nil {
		t.Fatal(err)
	}
	if err := put(t, s, "bkt", "newer", stamp(50, "w"), []byte("written after")); err != nil {
		t.Fatal(err)
	}
	locked := inlined("bkt", "locked", stamp(10, "w"), []byte("kept for a year"))
	locked.Headers = map[string]string{}
	objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: time.Now().Add(time.Hour)}}.Apply(locked.Headers)
	if err := s.Commit(ctx, locked, nil); err != nil {
		t.Fatal(err)
	}
	keys := []string{"data", "inline", "newer", "locked", "never-written"}
	tombs := make([]*meta.Object, len(keys))
	for i, k := range keys {
		tombs[i] = object("bkt", k, stamp(20, "d"))
	}
	errs, err := s.CommitTombstones(ctx, "bkt", tombs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]error{"newer": meta.ErrStale, "locked": meta.ErrObjectLocked}
	for i, k := range keys {
		if w := want[k]; (w == nil) != (errs[i] == nil) || !errors.Is(errs[i], w) {
			t.Errorf("%s: %v, want %v", k, errs[i], w)
		}
	}
	if held, ok := meta.HeldStamp(errs[2]); !ok || held != stamp(50, "w") {
		t.Errorf("stale refusal names %v (%v), want the held stamp 50/w", held, ok)
	}
	s = reopen(t, s) // what was acknowledged is durable
	for _, k := range []string{"data", "inline", "never-written"} {
		if o, err := s.ReadMeta(ctx, "bkt", k); err != nil || !o.Deleted || o.Stamp != stamp(20, "d") {
			t.Errorf("%s after the batch: %+v, %v", k, o, err)
		}
	}
	for k, st := range map[string]meta.Stamp{"newer": stamp(50, "w"), "locked": stamp(10, "w")} {
		if o, err := s.ReadMeta(ctx, "bkt", k); err != nil || o.Deleted || o.Stamp != st {
			t.Errorf("%s refused, yet holds %+v, %v", k, o, err)
		}
	}
	vs, err := s.ReadVersions(ctx, "bkt", "data")
	if err != nil || len(vs) != 2 || vs[1].Stamp != stamp(10, "w") {
		t.Fatalf("data keeps the version the tombstone replaced until settled: %v, %v", vs, err)
	}
	if b, err := readShard(t, s, "bkt", "data", stamp(10, "w"), 1); err != nil || string(b) != "shard of data" {
		t.Fatalf("kept shard: %q, %v", b, err)
	}
	if err := s.Settle(ctx, "bkt", "data", stamp(20, "d")); err != nil {
		t.Fatal(err)
	}
	if vs, err := s.ReadVersions(ctx, "bkt", "data"); err != nil || len(vs) != 1 {
		t.Fatalf("after settling: %v, %v", vs, err)
	}
}

// A malformed batch is refused whole, with nothing committed.
func TestCommitTombstonesRefusesMalformed(t *testing.T) {
	s := newStore(t)
	mustMakeBucket(t, s, "other")
	tomb := func(bucket, key string) *meta.Object { return object(bucket, key, stamp(20, "d")) }
	many := make([]*meta.Object, meta.MaxBatch+1)
	for i := range many {
		many[i] = tomb("bkt", string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	cases := []struct {
		name   string
		bucket string
		os     []*meta.Object
		want   error
	}{
		{"empty", "bkt", nil, ErrInvalidArgument},
		{"over the limit", "bkt", many, ErrInvalidArgument},
		{"a key twice", "bkt", []*meta.Object{tomb("bkt", "a"), tomb("bkt", "a")}, ErrInvalidArgument},
		{"another bucket's", "bkt", []*meta.Object{tomb("bkt", "a"), tomb("other", "b")}, ErrInvalidArgument},
		{"not a tombstone", "bkt", []*meta.Object{tomb("bkt", "a"), inlined("bkt", "b", stamp(20, "d"), []byte("x"))}, ErrInvalidArgument},
		{"bad key", "bkt", []*meta.Object{tomb("bkt", "")}, ErrInvalidArgument},
		{"no bucket", "gone", []*meta.Object{tomb("gone", "a")}, meta.ErrBucketNotFound},
	}
	for _, tc := range cases {
		if errs, err := s.CommitTombstones(ctx, tc.bucket, tc.os); !errors.Is(err, tc.want) || errs != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, errs, err, tc.want)
		}
	}
	if o, err := s.ReadMeta(ctx, "bkt", "a"); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("a refused batch committed %+v", o)
	}
}
