package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tessera/meta"
)

func TestValidBucket(t *testing.T) {
	cases := map[string]bool{
		"abc": true, "my-bucket.v2": true, "a1b": true, strings.Repeat("a", 63): true,
		"ab": false, strings.Repeat("a", 64): false, "../x": false, "a..b": false, ".ab": false,
		"ab.": false, "-ab": false, "ab-": false, "Abc": false, "a_b": false, "a/b": false,
		"a b": false, "": false, "..": false, "abc\x00": false, "ábc": false,
	}
	for name, want := range cases {
		if got := ValidBucket(name); got != want {
			t.Errorf("ValidBucket(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestValidUploadIDAndKey(t *testing.T) {
	ids := map[string]bool{
		"u": true, "6f1c2a3e-0000-4000-8000-000000000000": true, "a.b_c~d-E": true,
		strings.Repeat("x", 128): true, strings.Repeat("x", 129): false,
		"": false, ".": false, "..": false, ".hidden": false, "a/b": false, "a\\b": false, "a b": false,
	}
	for id, want := range ids {
		if got := ValidUploadID(id); got != want {
			t.Errorf("ValidUploadID(%q) = %v, want %v", id, got, want)
		}
	}
	keys := map[string]bool{
		"k": true, "..": true, "/a/../b": true, "日本": true, strings.Repeat("k", 1024): true,
		meta.VersionKey(strings.Repeat("k", 1024), meta.NewVersionID(1)): true,
		"": false, strings.Repeat("k", 1025): false, "bad\xffutf8": false,
	}
	for k, want := range keys {
		if got := ValidKey(k); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestBadNamesTouchNothing calls every method with hostile names and checks
// each fails with ErrInvalidArgument and the data dir is unchanged.
func TestBadNamesTouchNothing(t *testing.T) {
	s := newStore(t)
	id := stage(t, s, []byte("x"))
	before := treeListing(t, s.Dir())
	badBuckets := []string{"../x", "..", "", "a/b", "BKT", "bkt/../../x"}
	badKeys := []string{"", strings.Repeat("k", 1025), "\xff\xfe"}
	p := meta.Part{Number: 1}
	for _, b := range badBuckets {
		calls := map[string]error{
			"make":   s.MakeBucket(ctx, meta.Bucket{Name: b}),
			"delete": s.DeleteBucket(ctx, b),
			"commit": s.Commit(ctx, object(b, "k", stamp(1, "w"), []byte("x")), []string{id}),
			"upload": s.PutUpload(ctx, &meta.Upload{Bucket: b, Key: "k", UploadID: "u"}),
			"part":   s.CommitPart(ctx, b, "k", "u", p, id),
			"abort":  s.AbortUpload(ctx, b, "k", "u"),
		}
		_, calls["stat"] = s.StatBucket(ctx, b)
		_, calls["meta"] = s.ReadMeta(ctx, b, "k")
		_, calls["list"] = s.List(ctx, b, "", "", 0, "")
		_, calls["get upload"] = s.GetUpload(ctx, b, "k", "u")
		_, _, calls["shard"] = s.OpenShard(ctx, b, "k", stamp(1, "w"), 1, 0, -1)
		for name, err := range calls {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s with bucket %q: %v", name, b, err)
			}
		}
	}
	for _, k := range badKeys {
		if err := s.Commit(ctx, object("bkt", k, stamp(1, "w"), []byte("x")), []string{id}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("commit key %q: %v", k, err)
		}
		if _, err := s.ReadMeta(ctx, "bkt", k); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("read key %q: %v", k, err)
		}
	}
	for _, w := range []string{strings.Repeat("w", 129), "bad\xff"} {
		if err := s.Commit(ctx, object("bkt", "k", stamp(1, w), []byte("x")), []string{id}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("writer %q: %v", w, err)
		}
	}
	if after := treeListing(t, s.Dir()); after != before {
		t.Fatalf("tree changed:\n%s\nvs\n%s", before, after)
	}
}

func treeListing(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
		b.WriteString(p + "\n")
		return nil
	})
	return b.String()
}

func TestClosedStore(t *testing.T) {
	s := newStore(t)
	s.Close()
	_, err := s.ReadMeta(ctx, "bkt", "k")
	wantErr(t, "read after close", err, ErrClosed)
	_, err = s.StageShard(ctx, strings.NewReader("x"))
	wantErr(t, "stage after close", err, ErrClosed)
	wantErr(t, "make after close", s.MakeBucket(ctx, meta.Bucket{Name: "abc"}), ErrClosed)
}

func TestCanceledContext(t *testing.T) {
	s := newStore(t)
	c, cancel := contextWithCancel()
	cancel()
	_, err := s.StageShard(c, strings.NewReader("x"))
	if err == nil {
		t.Fatal("stage with canceled ctx succeeded")
	}
	if tmpEntries(t, s) != 0 {
		t.Fatal("canceled stage left a file")
	}
}

func TestStatAndSweep(t *testing.T) {
	s := newStore(t)
	capacity, free, err := s.Stat()
	if err != nil || capacity == 0 || free > capacity {
		t.Fatalf("stat: %d %d %v", capacity, free, err)
	}
	stage(t, s, []byte("x"))
	if n, err := s.SweepStaging(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("sweep young: %d %v", n, err)
	}
	if n, err := s.SweepStaging(ctx, -time.Second); err != nil || n != 1 {
		t.Fatalf("sweep old: %d %v", n, err)
	}
}

func TestDataDirNamesDistinct(t *testing.T) {
	a, b := stamp(7, "w.1"), stamp(7, "w_1")
	if a.String() != b.String() {
		t.Fatal("precondition: these stamps should render alike")
	}
	if dataDirName(a) == dataDirName(b) {
		t.Fatal("distinct stamps share a data dir")
	}
}

// FuzzNames checks that whatever a validator accepts stays one path
// component below its parent, and that part record names round-trip.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"abc", "../x", "..", "a.b", "part.1.meta", "part.01.meta", "part.10000.meta", "u~1", "/", "a\x00b"} {
		f.Add(s)
	}
	root := filepath.FromSlash("/data/buckets")
	f.Fuzz(func(t *testing.T, s string) {
		for name, ok := range map[string]bool{"bucket": ValidBucket(s), "upload": ValidUploadID(s), "tmp": validTmpID(s)} {
			if !ok {
				continue
			}
			p := filepath.Join(root, s)
			if filepath.Dir(p) != root || filepath.Base(p) != s {
				t.Fatalf("valid %s name %q escapes: %s", name, s, p)
			}
		}
		if n, ok := parsePartMetaName(s); ok && partMetaName(n) != s {
			t.Fatalf("part name %q parsed as %d", s, n)
		}
	})
}
