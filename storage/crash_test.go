package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"tessera/meta"
)

func TestStagedNeverCommittedIsWiped(t *testing.T) {
	s := newStore(t)
	id := stage(t, s, []byte("orphan"))
	s = reopen(t, s)
	if n := tmpEntries(t, s); n != 0 {
		t.Fatalf("%d staged files survived reopen", n)
	}
	err := s.Commit(ctx, object("bkt", "k", stamp(1, "w"), []byte("orphan")), []string{id})
	wantErr(t, "commit wiped id", err, ErrStagedNotFound)
	if _, err := s.ReadMeta(ctx, "bkt", "k"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("read meta: %v", err)
	}
	if ents, _ := s.List(ctx, "bkt", "", "", 0, ""); len(ents) != 0 {
		t.Fatalf("list shows %v", ents)
	}
}

// TestCrashBeforeRecord builds, by hand, what each crash point of a commit
// of v2 over v1 leaves on disk, and checks reopening shows v1 intact with
// the leftovers gone or ignored. The record itself is one index batch,
// applied whole or not at all; what a crash can leave besides the index
// is data and stray files.
func TestCrashBeforeRecord(t *testing.T) {
	v1, v2 := stamp(1, "w"), stamp(2, "w")
	cases := []struct {
		name  string
		crash func(t *testing.T, s *Store, objDir string)
	}{
		{"staged file never committed", func(t *testing.T, s *Store, objDir string) {
			writeFile(t, filepath.Join(s.Dir(), ".tmp", "3b241101-e2bb-4255-8caf-4136c566a962"), []byte("new"))
		}},
		{"record file of the old layout next to the data", func(t *testing.T, s *Store, objDir string) {
			// Left by a migration whose removal was not durable: the
			// index is the record, the file is garbage.
			rec, _ := meta.MarshalObject(object("bkt", "k", v2, []byte("new")))
			writeFile(t, filepath.Join(objDir, "meta"), rec)
		}},
		{"data placed, record not written", func(t *testing.T, s *Store, objDir string) {
			dir := filepath.Join(objDir, dataDirName(v2))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "part.1"), []byte("new"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if err := put(t, s, "bkt", "k", v1, []byte("old")); err != nil {
				t.Fatal(err)
			}
			s.Close()
			tc.crash(t, s, s.objDir("bkt", "k"))
			s = openAt(t, s.Dir())
			waitSweep(s)
			if _, err := os.Stat(filepath.Join(s.objDir("bkt", "k"), "meta")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("stray record file survived the sweep: %v", err)
			}
			o, err := s.ReadMeta(ctx, "bkt", "k")
			if err != nil || o.Stamp != v1 {
				t.Fatalf("after crash: %v %+v", err, o)
			}
			if got, err := readShard(t, s, "bkt", "k", v1, 1); err != nil || string(got) != "old" {
				t.Fatalf("old data: %v %q", err, got)
			}
			if d := dataDirs(t, s, "bkt", "k"); len(d) != 1 || d[0] != dataDirName(v1) {
				t.Fatalf("data dirs after reopen: %v", d)
			}
			if tmpEntries(t, s) != 0 {
				t.Fatal("staging not wiped")
			}
			// The interrupted write can be redone.
			if err := put(t, s, "bkt", "k", v2, []byte("new")); err != nil {
				t.Fatalf("redo: %v", err)
			}
		})
	}
}

func TestCrashBeforeFirstRecord(t *testing.T) {
	s := newStore(t)
	dir := filepath.Join(s.objDir("bkt", "k"), dataDirName(stamp(1, "w")))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "part.1"), []byte("x"))
	s = reopen(t, s)
	waitSweep(s)
	if _, err := s.ReadMeta(ctx, "bkt", "k"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("read meta: %v", err)
	}
	if _, err := os.Stat(s.objDir("bkt", "k")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("object dir without record survived: %v", err)
	}
}

func TestCorruptRecords(t *testing.T) {
	s := newStore(t)
	for _, k := range []string{"flip", "moved", "fine"} {
		if err := put(t, s, "bkt", k, stamp(1, "w"), []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	damage(t, s, "bkt", "flip", func(n int) int { return n / 2 })
	// A valid record under another key is damage too.
	good, err := s.get(objKey("bkt", "fine"))
	if err != nil {
		t.Fatal(err)
	}
	b := s.db.NewBatch()
	b.Set(objKey("bkt", "moved"), good, nil)
	if err := s.apply(b); err != nil {
		t.Fatal(err)
	}

	for _, k := range []string{"flip", "moved"} {
		if _, err := s.ReadMeta(ctx, "bkt", k); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("%s: %v, want ErrCorrupt", k, err)
		}
	}
	s = reopen(t, s)
	ents, err := s.List(ctx, "bkt", "", "", 0, "")
	if err != nil || len(ents) != 1 || ents[0].Key != "fine" {
		t.Fatalf("list after reopen: %v %+v", err, ents)
	}
	// A damaged record is a missing copy: any new version replaces it.
	if err := put(t, s, "bkt", "flip", stamp(1, "w"), []byte("repaired")); err != nil {
		t.Fatalf("repair commit: %v", err)
	}
	if got, err := readShard(t, s, "bkt", "flip", stamp(1, "w"), 1); err != nil || string(got) != "repaired" {
		t.Fatalf("repaired data: %v %q", err, got)
	}
}

func TestCorruptBucketRecord(t *testing.T) {
	s := newStore(t)
	mustMakeBucket(t, s, "two")
	writeFile(t, filepath.Join(s.bucketDir("two"), bucketMetaName), []byte("garbage"))
	if _, err := s.StatBucket(ctx, "two"); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("stat: %v", err)
	}
	bs, err := s.ListBuckets(ctx)
	if err != nil || len(bs) != 1 || bs[0].Name != "bkt" {
		t.Fatalf("list buckets: %v %+v", err, bs)
	}
	mustMakeBucket(t, s, "two")
	if b, err := s.StatBucket(ctx, "two"); err != nil || b.Name != "two" {
		t.Fatalf("after remake: %v %+v", err, b)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// populate fills a store with every kind of thing it holds.
func populate(t *testing.T, s *Store) {
	t.Helper()
	mustMakeBucket(t, s, "two")
	for i, k := range []string{"a", "b/c", "..", "日本"} {
		if err := put(t, s, "bkt", k, stamp(int64(i+1), "w"), []byte(k), []byte("p2")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, inlined("two", "in", stamp(1, "w"), []byte("inline")), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, object("two", "gone", stamp(1, "w")), nil); err != nil {
		t.Fatal(err)
	}
	u := &meta.Upload{Bucket: "bkt", Key: "up", UploadID: "u1"}
	if err := s.PutUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitPart(ctx, "bkt", "up", "u1", meta.Part{Number: 1, ETag: "e"}, stage(t, s, []byte("part"))); err != nil {
		t.Fatal(err)
	}
	stage(t, s, []byte("dangling"))
}

// exercise calls every method; results are checked only for the
// invariant that holds whatever the disk looks like: damaged records are
// never returned as data.
func exercise(t *testing.T, s *Store) {
	t.Helper()
	for _, k := range []string{"a", "b/c", "..", "日本", "in", "gone", "new"} {
		for _, b := range []string{"bkt", "two"} {
			if o, err := s.ReadMeta(ctx, b, k); err == nil && (o.Key != k || o.Bucket != b) {
				t.Fatalf("read meta %s/%s returned %s/%s", b, k, o.Bucket, o.Key)
			}
			if rc, _, err := s.OpenShard(ctx, b, k, stamp(1, "w"), 1, 0, -1); err == nil {
				rc.Close()
			}
			s.List(ctx, b, "", "", 0, "")
			s.List(ctx, b, "a", "", 2, "")
		}
	}
	s.ListBuckets(ctx)
	s.StatBucket(ctx, "bkt")
	s.GetUpload(ctx, "bkt", "up", "u1")
	s.CommitPart(ctx, "bkt", "up", "u1", meta.Part{Number: 2, ETag: "f"}, stage(t, s, []byte("p")))
	s.CompleteUpload(ctx, object("bkt", "up", stamp(9, "w"), []byte("part")), "u1")
	s.AbortUpload(ctx, "bkt", "up", "u1")
	s.PutUpload(ctx, &meta.Upload{Bucket: "bkt", Key: "up", UploadID: "u2"})
	put(t, s, "bkt", "new", stamp(100, "w"), []byte("new"))
	s.Commit(ctx, inlined("two", "in", stamp(100, "w"), []byte("x")), nil)
	s.DeleteBucket(ctx, "two")
	s.MakeBucket(ctx, meta.Bucket{Name: "two"})
	s.SweepStaging(ctx, 0)
	s.Stat()
}

func TestDiskGarbage(t *testing.T) {
	s := openAt(t, t.TempDir())
	mustMakeBucket(t, s, "bkt")
	populate(t, s)
	rng := rand.New(rand.NewPCG(1, 2))
	// The files of the layout get garbage; the index's records get bit
	// rot through the index (TestGarbageIndex covers its files).
	fillWithJunk(t, s.Dir(), filepath.Join(s.Dir(), "index"), rng)
	for _, k := range []string{"a", "b/c", "..", "日本"} {
		damage(t, s, "bkt", k, func(n int) int { return rng.IntN(n) })
	}
	for _, k := range []string{"a", "b/c", "..", "日本"} {
		if _, err := s.ReadMeta(ctx, "bkt", k); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("garbage record %q: %v", k, err)
		}
	}
	exercise(t, s)
	s = reopen(t, s)
	exercise(t, s)

	// Now take the tree apart under the open store.
	for _, p := range []string{"buckets/bkt/obj", "buckets/bkt/uploads", ".tmp"} {
		os.RemoveAll(filepath.Join(s.Dir(), p))
	}
	os.RemoveAll(filepath.Join(s.Dir(), "buckets/two"))
	writeFile(t, filepath.Join(s.Dir(), "buckets/two"), []byte("a file where a dir was"))
	exercise(t, s)
	s = reopen(t, s)
	exercise(t, s)

	// The store still works for new data.
	mustMakeBucket(t, s, "fresh")
	if err := put(t, s, "fresh", "k", stamp(1, "w"), []byte("ok")); err != nil {
		t.Fatalf("write after garbage: %v", err)
	}
	if got, err := readShard(t, s, "fresh", "k", stamp(1, "w"), 1); err != nil || !bytes.Equal(got, []byte("ok")) {
		t.Fatalf("read after garbage: %v", err)
	}
}

// fillWithJunk overwrites every regular file under root, except under
// the dir skip, with up to 300 random bytes.
func fillWithJunk(t *testing.T, root, skip string, rng *rand.Rand) {
	t.Helper()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && p == skip {
			return filepath.SkipDir
		}
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		junk := make([]byte, rng.IntN(300))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		return os.WriteFile(p, junk, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGarbageIndex: an index whose files hold garbage fails Open with an
// error (the peer then reports its disk as failed); nothing panics.
func TestGarbageIndex(t *testing.T) {
	s := newStore(t)
	populate(t, s)
	s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	fillWithJunk(t, filepath.Join(s.Dir(), "index"), "", rng)
	if s, err := Open(s.Dir(), DefaultConfig()); err == nil {
		s.Close()
		t.Fatal("open over a garbage index succeeded")
	}
}

func TestStageSurvivesMissingStagingDir(t *testing.T) {
	s := newStore(t)
	if err := os.RemoveAll(filepath.Join(s.Dir(), ".tmp")); err != nil {
		t.Fatal(err)
	}
	if err := put(t, s, "bkt", "k", stamp(1, "w"), []byte("x")); err != nil {
		t.Fatalf("put after staging dir vanished: %v", err)
	}
}

// TestDeleteBucketCrash builds what each crash point of deleting a bucket
// that holds an upload leaves on disk: before the rename the bucket and
// its upload are whole; after it (the tree hidden in staging, maybe half
// removed) there is no bucket, and a bucket made again under the name
// holds no trace of the upload.
func TestDeleteBucketCrash(t *testing.T) {
	cases := []struct {
		name  string
		crash func(t *testing.T, s *Store)
		gone  bool
	}{
		{"before the rename", func(t *testing.T, s *Store) {}, false},
		{"after the rename", func(t *testing.T, s *Store) {
			if err := os.Rename(s.bucketDir("bkt"), filepath.Join(s.Dir(), ".tmp", "5f0c3c43-5d0e-4d55-9a8e-8d9a7f0e6b11")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"part way through removing the hidden tree", func(t *testing.T, s *Store) {
			hidden := filepath.Join(s.Dir(), ".tmp", "5f0c3c43-5d0e-4d55-9a8e-8d9a7f0e6b11")
			if err := os.Rename(s.bucketDir("bkt"), hidden); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(hidden, bucketMetaName)); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			newUpload(t, s, "k", "u")
			commitPart(t, s, "k", "u", 1, "part one")
			s.Close()
			tc.crash(t, s)
			s = openAt(t, s.Dir())
			if tmpEntries(t, s) != 0 {
				t.Fatal("staging not wiped")
			}
			_, err := s.StatBucket(ctx, "bkt")
			if !tc.gone {
				wantErr(t, "stat", err, nil)
				u, err := s.GetUpload(ctx, "bkt", "k", "u")
				if err != nil || len(u.Parts) != 1 {
					t.Fatalf("upload after the crash: %+v, %v", u, err)
				}
				wantErr(t, "delete after the crash", s.DeleteBucket(ctx, "bkt"), nil)
				return
			}
			wantErr(t, "stat", err, meta.ErrBucketNotFound)
			mustMakeBucket(t, s, "bkt")
			_, err = s.GetUpload(ctx, "bkt", "k", "u")
			wantErr(t, "upload in the bucket made again", err, meta.ErrUploadNotFound)
			if ups, err := s.ListUploads(ctx, "bkt", ""); err != nil || len(ups) != 0 {
				t.Fatalf("uploads in the bucket made again: %v %v", ups, err)
			}
			err = filepath.Walk(s.bucketDir("bkt"), func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() && fi.Name() != bucketMetaName {
					t.Errorf("left on disk: %s", p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
