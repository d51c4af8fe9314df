package storage

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"tessera/meta"
)

func newUpload(t *testing.T, s *Store, key, id string) {
	t.Helper()
	u := &meta.Upload{Bucket: "bkt", Key: key, UploadID: id, Code: meta.Code{K: 1}, Parts: []meta.Part{{Number: 99}}}
	if err := s.PutUpload(ctx, u); err != nil {
		t.Fatalf("put upload: %v", err)
	}
}

func commitPart(t *testing.T, s *Store, key, id string, n int, data string) {
	t.Helper()
	p := meta.Part{Number: n, Size: int64(len(data)), ETag: "etag-" + data}
	if err := s.CommitPart(ctx, "bkt", key, id, p, stage(t, s, []byte(data))); err != nil {
		t.Fatalf("commit part %d: %v", n, err)
	}
}

func completion(key string, st meta.Stamp, parts map[int]string, order ...int) *meta.Object {
	o := object("bkt", key, st)
	o.Deleted = false
	for _, n := range order {
		o.Parts = append(o.Parts, meta.Part{Number: n, Size: int64(len(parts[n])), ETag: "etag-" + parts[n]})
	}
	return o
}

func TestUploadLifecycle(t *testing.T) {
	s := newStore(t)
	key := "dir/../multi part"
	newUpload(t, s, key, "up-1")
	commitPart(t, s, key, "up-1", 1, "one")
	commitPart(t, s, key, "up-1", 3, "three")
	commitPart(t, s, key, "up-1", 2, "two-old")
	commitPart(t, s, key, "up-1", 2, "two") // replaces part 2

	s = reopen(t, s)
	u, err := s.GetUpload(ctx, "bkt", key, "up-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []meta.Part{{Number: 1, Size: 3, ETag: "etag-one"}, {Number: 2, Size: 3, ETag: "etag-two"}, {Number: 3, Size: 5, ETag: "etag-three"}}
	if fmt.Sprint(u.Parts) != fmt.Sprint(want) || u.Key != key || u.Code.K != 1 {
		t.Fatalf("upload %+v, want parts %v", u, want)
	}
	if n := countFiles(t, s.uploadDir("bkt", key, "up-1")); n != 1+3+3 {
		t.Fatalf("upload dir holds %d files, want 7 (replaced part data removed)", n)
	}

	st := stamp(10, "w")
	parts := map[int]string{1: "one", 2: "two", 3: "three"}
	if err := s.CompleteUpload(ctx, completion(key, st, parts, 1, 2), "up-1"); err != nil {
		t.Fatalf("complete: %v", err)
	}
	for n, data := range map[int]string{1: "one", 2: "two"} {
		if got, err := readShard(t, s, "bkt", key, st, n); err != nil || string(got) != data {
			t.Fatalf("part %d: %v %q", n, err, got)
		}
	}
	if _, err := readShard(t, s, "bkt", key, st, 3); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("uncompleted part 3 readable: %v", err)
	}
	if _, err := s.GetUpload(ctx, "bkt", key, "up-1"); !errors.Is(err, meta.ErrUploadNotFound) {
		t.Fatalf("upload after complete: %v", err)
	}
	if _, err := os.Stat(s.uploadsDir("bkt") + "/" + keyHash(key)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty upload key dir left: %v", err)
	}
	wantErr(t, "abort completed", s.AbortUpload(ctx, "bkt", key, "up-1"), meta.ErrUploadNotFound)
	if tmpEntries(t, s) != 0 {
		t.Fatal("staging not empty")
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestCompleteUploadFailuresKeepUpload(t *testing.T) {
	parts := map[int]string{1: "one", 2: "two"}
	cases := []struct {
		name string
		o    func() *meta.Object
		id   string
		want error
	}{
		{"unknown part", func() *meta.Object { return completion("k", stamp(5, "w"), map[int]string{7: "x"}, 7) }, "u", ErrInvalidPart},
		{"etag differs", func() *meta.Object { return completion("k", stamp(5, "w"), map[int]string{1: "uno"}, 1) }, "u", ErrInvalidPart},
		{"stale", func() *meta.Object { return completion("k", stamp(1, "w"), parts, 1, 2) }, "u", meta.ErrStale},
		{"unknown upload", func() *meta.Object { return completion("k", stamp(5, "w"), parts, 1) }, "nope", meta.ErrUploadNotFound},
		{"tombstone", func() *meta.Object { return object("bkt", "k", stamp(5, "w")) }, "u", ErrInvalidArgument},
		{"no parts", func() *meta.Object { return completion("k", stamp(5, "w"), parts) }, "u", ErrInvalidArgument},
		{"bad upload id", func() *meta.Object { return completion("k", stamp(5, "w"), parts, 1) }, "../u", ErrInvalidArgument},
		{"nil", func() *meta.Object { return nil }, "u", ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if err := put(t, s, "bkt", "k", stamp(2, "w"), []byte("current")); err != nil {
				t.Fatal(err)
			}
			newUpload(t, s, "k", "u")
			commitPart(t, s, "k", "u", 1, "one")
			commitPart(t, s, "k", "u", 2, "two")
			wantErr(t, "complete", s.CompleteUpload(ctx, tc.o(), tc.id), tc.want)
			if u, err := s.GetUpload(ctx, "bkt", "k", "u"); err != nil || len(u.Parts) != 2 {
				t.Fatalf("upload after failed complete: %v %+v", err, u)
			}
			if o, err := s.ReadMeta(ctx, "bkt", "k"); err != nil || o.Stamp != stamp(2, "w") {
				t.Fatalf("record after failed complete: %v %+v", err, o)
			}
			// The upload is still completable.
			wantErr(t, "retry", s.CompleteUpload(ctx, completion("k", stamp(6, "w"), parts, 1, 2), "u"), nil)
		})
	}
}

func TestUploadErrors(t *testing.T) {
	s := newStore(t)
	id := stage(t, s, []byte("x"))
	p := meta.Part{Number: 1, ETag: "e"}
	wantErr(t, "put upload, no bucket", s.PutUpload(ctx, &meta.Upload{Bucket: "nope", Key: "k", UploadID: "u"}), meta.ErrBucketNotFound)
	wantErr(t, "put upload, bad id", s.PutUpload(ctx, &meta.Upload{Bucket: "bkt", Key: "k", UploadID: ".."}), ErrInvalidArgument)
	wantErr(t, "put nil upload", s.PutUpload(ctx, nil), ErrInvalidArgument)
	wantErr(t, "part of missing upload", s.CommitPart(ctx, "bkt", "k", "u", p, id), meta.ErrUploadNotFound)
	_, err := s.GetUpload(ctx, "bkt", "k", "u")
	wantErr(t, "get missing", err, meta.ErrUploadNotFound)
	wantErr(t, "abort missing", s.AbortUpload(ctx, "bkt", "k", "u"), meta.ErrUploadNotFound)
	newUpload(t, s, "k", "u")
	wantErr(t, "part 0", s.CommitPart(ctx, "bkt", "k", "u", meta.Part{Number: 0}, id), ErrInvalidArgument)
	wantErr(t, "part 10001", s.CommitPart(ctx, "bkt", "k", "u", meta.Part{Number: 10001}, id), ErrInvalidArgument)
	wantErr(t, "bad staged id", s.CommitPart(ctx, "bkt", "k", "u", p, "x/../y"), ErrInvalidArgument)
	wantErr(t, "unknown staged id", s.CommitPart(ctx, "bkt", "k", "u", p, "6f1c2a3e-0000-4000-8000-000000000000"), ErrStagedNotFound)
	_, err = s.GetUpload(ctx, "bkt", "other key", "u")
	wantErr(t, "same id, other key", err, meta.ErrUploadNotFound)
	wantErr(t, "abort", s.AbortUpload(ctx, "bkt", "k", "u"), nil)
	_, err = s.GetUpload(ctx, "bkt", "k", "u")
	wantErr(t, "get aborted", err, meta.ErrUploadNotFound)
}

func TestDeleteBucket(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, s *Store) *Store
		want  error
	}{
		{"empty", func(t *testing.T, s *Store) *Store { return s }, nil},
		{"live object", func(t *testing.T, s *Store) *Store {
			put(t, s, "bkt", "k", stamp(1, "w"), []byte("x"))
			return s
		}, meta.ErrBucketNotEmpty},
		{"inlined object", func(t *testing.T, s *Store) *Store {
			s.Commit(ctx, inlined("bkt", "k", stamp(1, "w"), []byte("x")), nil)
			return s
		}, meta.ErrBucketNotEmpty},
		{"tombstones only", func(t *testing.T, s *Store) *Store {
			put(t, s, "bkt", "k", stamp(1, "w"), []byte("x"))
			s.Commit(ctx, object("bkt", "k", stamp(2, "w")), nil)
			return s
		}, nil},
		{"upload", func(t *testing.T, s *Store) *Store { newUpload(t, s, "k", "u"); return s }, nil},
		{"upload with parts", func(t *testing.T, s *Store) *Store {
			newUpload(t, s, "k", "u")
			commitPart(t, s, "k", "u", 1, "part one")
			return s
		}, nil},
		{"upload and live object", func(t *testing.T, s *Store) *Store {
			newUpload(t, s, "k", "u")
			put(t, s, "bkt", "o", stamp(1, "w"), []byte("x"))
			return s
		}, meta.ErrBucketNotEmpty},
		{"aborted upload", func(t *testing.T, s *Store) *Store {
			newUpload(t, s, "k", "u")
			s.AbortUpload(ctx, "bkt", "k", "u")
			return s
		}, nil},
		{"live object after reopen", func(t *testing.T, s *Store) *Store {
			put(t, s, "bkt", "k", stamp(1, "w"), []byte("x"))
			return reopen(t, s)
		}, meta.ErrBucketNotEmpty},
		{"tombstone after reopen", func(t *testing.T, s *Store) *Store {
			s.Commit(ctx, object("bkt", "k", stamp(2, "w")), nil)
			return reopen(t, s)
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup(t, newStore(t))
			before, _ := s.ListUploads(ctx, "bkt", "")
			wantErr(t, "delete", s.DeleteBucket(ctx, "bkt"), tc.want)
			_, err := s.StatBucket(ctx, "bkt")
			if tc.want != nil {
				wantErr(t, "stat kept bucket", err, nil)
				if after, _ := s.ListUploads(ctx, "bkt", ""); len(after) != len(before) {
					t.Fatalf("refused delete changed the uploads: %d, then %d", len(before), len(after))
				}
				return
			}
			wantErr(t, "stat deleted bucket", err, meta.ErrBucketNotFound)
			wantErr(t, "delete again", s.DeleteBucket(ctx, "bkt"), meta.ErrBucketNotFound)
			// Recreated, it is empty: nothing of the old contents comes back.
			mustMakeBucket(t, s, "bkt")
			if ents, err := s.List(ctx, "bkt", "", "", 0, ""); err != nil || len(ents) != 0 {
				t.Fatalf("recreated bucket lists %v %v", ents, err)
			}
			if ups, err := s.ListUploads(ctx, "bkt", ""); err != nil || len(ups) != 0 {
				t.Fatalf("recreated bucket lists uploads %v %v", ups, err)
			}
			_, err = s.GetUpload(ctx, "bkt", "k", "u")
			wantErr(t, "old upload in the recreated bucket", err, meta.ErrUploadNotFound)
		})
	}
}

// A versioned bucket completes an upload of a key into a version key of
// it: the parts move from the key's upload to the version's record, and
// the key itself gets nothing.
func TestCompleteUploadIntoVersion(t *testing.T) {
	s := newStore(t)
	newUpload(t, s, "k", "up-1")
	commitPart(t, s, "k", "up-1", 1, "one")
	version := meta.VersionKey("k", meta.NewVersionID(1e18))
	st := stamp(10, "w")
	if err := s.CompleteUpload(ctx, completion(version, st, map[int]string{1: "one"}, 1), "up-1"); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got, err := readShard(t, s, "bkt", version, st, 1); err != nil || string(got) != "one" {
		t.Fatalf("version's part 1: %v %q", err, got)
	}
	if _, err := s.GetUpload(ctx, "bkt", "k", "up-1"); !errors.Is(err, meta.ErrUploadNotFound) {
		t.Fatalf("upload after complete: %v", err)
	}
	if _, err := s.ReadMeta(ctx, "bkt", "k"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("the key itself: %v", err)
	}
	// Another key's upload cannot be completed into this key's version.
	newUpload(t, s, "other", "up-2")
	commitPart(t, s, "other", "up-2", 1, "one")
	wantErr(t, "complete across keys", s.CompleteUpload(ctx, completion(meta.VersionKey("k", meta.NewVersionID(2e18)), st, map[int]string{1: "one"}, 1), "up-2"), meta.ErrUploadNotFound)
}

// An upload completing into a version key whose lock stripe is its key's
// takes that stripe once: taking it twice hung the completion, and every
// later write of a key in the stripe, on every peer.
func TestCompleteUploadIntoVersionSharingAStripe(t *testing.T) {
	s := newStore(t)
	var version string
	for n := int64(1); version == ""; n++ {
		if v := meta.VersionKey("k", meta.NewVersionID(1e18+n)); stripe("bkt", keyHash(v)) == stripe("bkt", keyHash("k")) {
			version = v
		}
	}
	newUpload(t, s, "k", "up-1")
	commitPart(t, s, "k", "up-1", 1, "one")
	done := make(chan error, 1)
	go func() {
		done <- s.CompleteUpload(ctx, completion(version, stamp(10, "w"), map[int]string{1: "one"}, 1), "up-1")
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("complete: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("completing into a version key of the same lock stripe hangs")
	}
	if got, err := readShard(t, s, "bkt", version, stamp(10, "w"), 1); err != nil || string(got) != "one" {
		t.Fatalf("version's part 1: %v %q", err, got)
	}
}
