package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"tessera/meta"
)

// TestSweepSparesLiveData: a sweep running beside commits removes only
// what no record names; the current version and a retired one still in
// its grace period stay.
func TestSweepSparesLiveData(t *testing.T) {
	s := newStoreAt(t, time.Hour, nil)
	waitSweep(s)
	a, b := stamp(1, "w"), stamp(2, "w")
	for _, st := range []meta.Stamp{a, b} {
		if err := put(t, s, "bkt", "k", st, payload(st)); err != nil {
			t.Fatal(err)
		}
	}
	stray := filepath.Join(s.objDir("bkt", "k"), dataDirName(stamp(3, "w")))
	writeFileAll(t, filepath.Join(stray, "part.1"), []byte("stray"))
	s.sweepObject("bkt", s.objDir("bkt", "k"), keyHash("k"))
	if d := dataDirs(t, s, "bkt", "k"); len(d) != 2 || d[0] != dataDirName(a) || d[1] != dataDirName(b) {
		t.Fatalf("data dirs after the sweep: %v, want the retired and the current one", d)
	}
}

// TestSweepStopsOnClose: Close ends a sweep part way and the next Open's
// sweep finishes the work.
func TestSweepStopsOnClose(t *testing.T) {
	s := newStore(t)
	waitSweep(s)
	for _, k := range []string{"a", "b", "c"} {
		writeFileAll(t, filepath.Join(s.objDir("bkt", k), dataDirName(stamp(1, "w")), "part.1"), []byte(k))
	}
	s.Close()
	s = openAt(t, s.Dir())
	s.Close() // maybe before the sweep visited any dir
	s = openAt(t, s.Dir())
	waitSweep(s)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := os.Stat(s.objDir("bkt", k)); !os.IsNotExist(err) {
			t.Fatalf("%s: dir without a record survived: %v", k, err)
		}
	}
}

// TestDeleteBucketCrashIndex: a crash after DeleteBucket hid the tree
// and before it removed the bucket's index entries leaves entries of a
// bucket that does not exist; a bucket made again under the name shows
// none of them.
func TestDeleteBucketCrashIndex(t *testing.T) {
	s := newStore(t)
	if err := put(t, s, "bkt", "k", stamp(1, "w"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, object("bkt", "k", stamp(2, "w")), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, inlined("bkt", "in", stamp(1, "w"), []byte("i")), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Rename(s.bucketDir("bkt"), filepath.Join(s.Dir(), ".tmp", "5f0c3c43-5d0e-4d55-9a8e-8d9a7f0e6b11")); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, s.Dir())
	if _, err := s.StatBucket(ctx, "bkt"); !errorsIs(err, meta.ErrBucketNotFound) {
		t.Fatalf("stat: %v", err)
	}
	mustMakeBucket(t, s, "bkt")
	if ents, err := s.List(ctx, "bkt", "", "", 0, ""); err != nil || len(ents) != 0 {
		t.Fatalf("list of the bucket made again: %v %+v", err, ents)
	}
	if n := s.LiveObjects(); n != 0 {
		t.Fatalf("live objects %d", n)
	}
}

// TestDeleteBucketAfterDamage: replacing a damaged live record by a
// tombstone leaves the live count high (the damaged record's liveness is
// unknown); DeleteBucket finds the bucket empty all the same.
func TestDeleteBucketAfterDamage(t *testing.T) {
	s := newStore(t)
	if err := s.Commit(ctx, inlined("bkt", "k", stamp(1, "w"), []byte("i")), nil); err != nil {
		t.Fatal(err)
	}
	damage(t, s, "bkt", "k", func(n int) int { return n / 2 })
	if err := s.Commit(ctx, object("bkt", "k", stamp(2, "w")), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket(ctx, "bkt"); err != nil {
		t.Fatalf("delete bucket holding only a tombstone: %v", err)
	}
	if n := s.LiveObjects(); n != 0 {
		t.Fatalf("live objects %d", n)
	}
}
