package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tessera/meta"
)

// oldLayout writes, by hand, a store directory as the release before the
// index left it: a bucket record and one record file per object.
type oldLayout struct {
	t   *testing.T
	dir string
}

func (l oldLayout) bucket(name string) {
	rec, err := meta.Marshal(&meta.Bucket{Name: name, Created: time.Unix(1, 0).UTC()}, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	d := filepath.Join(l.dir, "buckets", name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		l.t.Fatal(err)
	}
	writeFile(l.t, filepath.Join(d, bucketMetaName), rec)
}

func (l oldLayout) objDir(bucket, key string) string {
	h := keyHash(key)
	return filepath.Join(l.dir, "buckets", bucket, "obj", h[:2], h)
}

// object writes o's record file and, for stored objects, its part files
// holding parts.
func (l oldLayout) object(o *meta.Object, parts ...[]byte) {
	d := l.objDir(o.Bucket, o.Key)
	if err := os.MkdirAll(d, 0o755); err != nil {
		l.t.Fatal(err)
	}
	rec, err := meta.MarshalObject(o)
	if err != nil {
		l.t.Fatal(err)
	}
	writeFile(l.t, filepath.Join(d, "meta"), rec)
	if hasData(o) {
		data := filepath.Join(d, dataDirName(o.Stamp))
		if err := os.MkdirAll(data, 0o755); err != nil {
			l.t.Fatal(err)
		}
		for i, p := range parts {
			writeFile(l.t, filepath.Join(data, partFileName(i+1)), p)
		}
	}
}

// TestMigrateOldLayout opens a store directory of the previous layout and
// checks every record moved into the index with its data still readable,
// damaged records and record-less dirs dropped, the old files gone, and a
// second Open not walking the old layout again.
func TestMigrateOldLayout(t *testing.T) {
	dir := t.TempDir()
	l := oldLayout{t, dir}
	l.bucket("bkt")
	l.bucket("two")
	v1, v2 := stamp(1, "w"), stamp(2, "w")
	l.object(object("bkt", "a", v1, []byte("aa"), []byte("p2")), []byte("aa"), []byte("p2"))
	l.object(object("bkt", "b/c", v1))
	l.object(inlined("bkt", "日本", v2, []byte("inline")))
	l.object(object("two", "x", v2, []byte("xx")), []byte("xx"))
	// A stray data dir next to a's record: a crashed commit of v2.
	writeFileAll(t, filepath.Join(l.objDir("bkt", "a"), dataDirName(v2), "part.1"), []byte("stray"))
	// A damaged record, and an object dir without one.
	writeFileAll(t, filepath.Join(l.objDir("bkt", "bad"), "meta"), []byte("garbage"))
	writeFileAll(t, filepath.Join(l.objDir("bkt", "norec"), dataDirName(v1), "part.1"), []byte("x"))

	s := openAt(t, dir)
	waitSweep(s)
	check := func(s *Store) {
		t.Helper()
		ents, err := s.List(ctx, "bkt", "", "", 0, "")
		if err != nil || len(ents) != 3 || ents[0].Key != "a" || ents[1].Key != "b/c" || !ents[1].Deleted || ents[2].Key != "日本" {
			t.Fatalf("list bkt: %v %+v", err, ents)
		}
		if got, err := readShard(t, s, "bkt", "a", v1, 2); err != nil || string(got) != "p2" {
			t.Fatalf("a part 2: %v %q", err, got)
		}
		if o, err := s.ReadMeta(ctx, "bkt", "日本"); err != nil || !bytes.Equal(o.Inline, []byte("inline")) {
			t.Fatalf("inlined: %v", err)
		}
		if got, err := readShard(t, s, "two", "x", v2, 1); err != nil || string(got) != "xx" {
			t.Fatalf("two/x: %v %q", err, got)
		}
		if n := s.LiveObjects(); n != 3 {
			t.Fatalf("live objects %d, want 3", n)
		}
		if _, err := s.ReadMeta(ctx, "bkt", "bad"); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("damaged record: %v", err)
		}
	}
	check(s)
	err := filepath.Walk(filepath.Join(dir, "buckets"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == "meta" {
			t.Errorf("old record file left: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := dataDirs(t, s, "bkt", "a"); len(d) != 1 || d[0] != dataDirName(v1) {
		t.Fatalf("a's data dirs after the sweep: %v", d)
	}
	if _, err := os.Stat(l.objDir("bkt", "norec")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("object dir without a record survived: %v", err)
	}

	// The marker is set: a record file appearing later (a removal that
	// was not durable) is not read again, and the sweep removes it.
	s.Close()
	l.object(object("bkt", "a", v2, []byte("zz")))
	s = openAt(t, dir)
	waitSweep(s)
	check(s)
	if o, _ := s.ReadMeta(ctx, "bkt", "a"); o.Stamp != v1 {
		t.Fatalf("record file read after the migration: %v", o.Stamp)
	}
}

// TestMigrateResumes: a migration that stopped after writing a batch and
// before removing its files writes the same records again on the next
// Open, counting each object once.
func TestMigrateResumes(t *testing.T) {
	dir := t.TempDir()
	l := oldLayout{t, dir}
	l.bucket("bkt")
	objs := []*meta.Object{
		object("bkt", "a", stamp(1, "w"), []byte("a")),
		inlined("bkt", "b", stamp(1, "w"), []byte("b")),
		object("bkt", "c", stamp(1, "w")),
	}
	for _, o := range objs {
		l.object(o, []byte(o.Key))
	}
	s := openAt(t, dir)
	// The crash: the files are back and the marker is not durable.
	b := s.db.NewBatch()
	b.Delete(markerKey(markerMigrated), nil)
	if err := s.apply(b); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, o := range objs {
		l.object(o, []byte(o.Key))
	}
	s = openAt(t, dir)
	if n := s.LiveObjects(); n != 2 {
		t.Fatalf("live objects after a resumed migration: %d, want 2", n)
	}
	if ents, err := s.List(ctx, "bkt", "", "", 0, ""); err != nil || len(ents) != 3 {
		t.Fatalf("list: %v %+v", err, ents)
	}
	if got, err := readShard(t, s, "bkt", "a", stamp(1, "w"), 1); err != nil || string(got) != "a" {
		t.Fatalf("a: %v %q", err, got)
	}
}

func writeFileAll(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// TestMigrateReportsProgress checks that an upgrade from the record-file
// layout publishes its size and progress while Open runs, batch by batch,
// and nothing once it is done.
func TestMigrateReportsProgress(t *testing.T) {
	dir := t.TempDir()
	l := oldLayout{t, dir}
	l.bucket("bkt")
	const n = 2*migrateBatch + 500
	for i := range n {
		l.object(inlined("bkt", fmt.Sprint("k", i), stamp(1, "w"), []byte("x")))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seen []LayoutUpgrade
	cfg := DefaultConfig()
	cfg.afterMigrateBatch = func() {
		for _, u := range LayoutUpgrades() {
			if u.Dir == abs {
				seen = append(seen, u)
			}
		}
	}
	s := openWith(t, dir, cfg)
	want := []int{migrateBatch, 2 * migrateBatch, n}
	if len(seen) != len(want) {
		t.Fatalf("progress seen after %d batches, want %d: %+v", len(seen), len(want), seen)
	}
	for i, u := range seen {
		if u.Moved != want[i] || u.Total != n || u.Started.IsZero() {
			t.Errorf("batch %d: %+v, want %d of %d moved", i, u, want[i], n)
		}
	}
	for _, u := range LayoutUpgrades() {
		if u.Dir == abs {
			t.Fatalf("upgrade still published after Open: %+v", u)
		}
	}
	if got := s.LiveObjects(); got != n {
		t.Fatalf("live objects %d, want %d", got, n)
	}
}
