package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

func TestRepairCommitReplacesSameVersionOnly(t *testing.T) {
	s := newStore(t)
	v1, v2 := stamp(100, "gw"), stamp(200, "gw")
	good := []byte("the good shard bytes")
	if err := put(t, s, "bkt", "k", v1, good); err != nil {
		t.Fatal(err)
	}
	// Damage the shard file behind the store's back, then repair it.
	path := filepath.Join(s.objDir("bkt", "k"), dataDirName(v1), partFileName(1))
	if err := os.WriteFile(path, []byte("rot"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, object("bkt", "k", v1, good), []string{stage(t, s, good)}); !errorsIs(err, meta.ErrStale) {
		t.Fatalf("plain commit of the same stamp: err = %v, want ErrStale", err)
	}
	// A writer retries a stale commit above the held stamp: its staged
	// file stays for that, until swept.
	if n := tmpEntries(t, s); n != 1 {
		t.Fatalf("%d staged files after a stale commit, want its 1 kept", n)
	}
	if _, err := s.SweepStaging(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.RepairCommit(ctx, object("bkt", "k", v1, good), []string{stage(t, s, good)}); err != nil {
		t.Fatalf("repair commit: %v", err)
	}
	if b, err := readShard(t, s, "bkt", "k", v1, 1); err != nil || !bytes.Equal(b, good) {
		t.Fatalf("after repair: %q, %v", b, err)
	}
	// A newer version is never replaced by a repair of an older one.
	newer := []byte("newer")
	if err := put(t, s, "bkt", "k", v2, newer); err != nil {
		t.Fatal(err)
	}
	if err := s.RepairCommit(ctx, object("bkt", "k", v1, good), []string{stage(t, s, good)}); !errorsIs(err, meta.ErrStale) {
		t.Fatalf("repair of an older version: err = %v, want ErrStale", err)
	}
	o, files, err := Inspect(s.Dir(), "bkt", "k")
	if err != nil || o.Stamp != v2 || len(files) != 1 || files[0].Size != int64(len(newer)) {
		t.Fatalf("inspect: %+v %+v %v", o, files, err)
	}
	if n := tmpEntries(t, s); n != 0 {
		t.Fatalf("%d staged files left behind", n)
	}
}

func TestRepairCommitFillsMissingCopy(t *testing.T) {
	s := newStore(t)
	st := stamp(7, "gw")
	if err := s.RepairCommit(ctx, inlined("bkt", "small", st, []byte("inline")), nil); err != nil {
		t.Fatal(err)
	}
	o, err := s.ReadMeta(ctx, "bkt", "small")
	if err != nil || o.Stamp != st || string(o.Inline) != "inline" {
		t.Fatalf("read back: %+v, %v", o, err)
	}
	if _, _, err := Inspect(s.Dir(), "bkt", "absent"); !errorsIs(err, meta.ErrNotFound) {
		t.Fatalf("inspect absent key: %v", err)
	}
	// A missing part file shows up in Inspect as size -1.
	if err := put(t, s, "bkt", "big", stamp(9, "gw"), []byte("abc"), []byte("defg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.objDir("bkt", "big"), dataDirName(stamp(9, "gw")), partFileName(2))); err != nil {
		t.Fatal(err)
	}
	_, files, err := Inspect(s.Dir(), "bkt", "big")
	if err != nil || len(files) != 2 || files[0].Size != 3 || files[1].Size != -1 {
		t.Fatalf("inspect: %+v %v", files, err)
	}
}

// TestInspectWithoutStore: Inspect reads a closed store's index itself,
// and, for an index another process holds open, a copy of it.
func TestInspectWithoutStore(t *testing.T) {
	s := newStore(t)
	if err := put(t, s, "bkt", "k", stamp(1, "w"), []byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, inlined("bkt", "in", stamp(2, "w"), []byte("i")), nil); err != nil {
		t.Fatal(err)
	}
	// As if another process held it: the copy path, with the store open.
	var o *meta.Object
	err := readCopy(filepath.Join(s.Dir(), "index"), func(r pebble.Reader) error {
		var err error
		o, err = readRecordIn(r, "bkt", "in")
		return err
	})
	if err != nil || o.Stamp != stamp(2, "w") {
		t.Fatalf("inspect a copy of an open index: %v %+v", err, o)
	}
	s.Close()
	o, files, err := Inspect(s.Dir(), "bkt", "k")
	if err != nil || o.Stamp != stamp(1, "w") || len(files) != 1 || files[0].Size != 4 {
		t.Fatalf("inspect a closed store: %v %+v %+v", err, o, files)
	}
	if _, _, err := Inspect(s.Dir(), "bkt", "absent"); !errorsIs(err, meta.ErrNotFound) {
		t.Fatalf("absent: %v", err)
	}
	if n, err := CountRecords(s.Dir()); err != nil || n != 2 {
		t.Fatalf("count records: %d %v", n, err)
	}
	// InspectKeys answers many keys from one read of the index, as
	// Inspect answers each.
	got, err := InspectKeys(s.Dir(), "bkt", []string{"k", "in", "absent"})
	if err != nil || len(got) != 3 {
		t.Fatalf("inspect keys: %v %+v", err, got)
	}
	if k := got["k"]; k.Object == nil || k.Object.Stamp != stamp(1, "w") || len(k.Files) != 1 || k.Files[0].Size != 4 {
		t.Errorf("inspect keys, stored object: %+v", k)
	}
	if in := got["in"]; in.Object == nil || in.Object.Stamp != stamp(2, "w") || in.Files != nil {
		t.Errorf("inspect keys, inlined object: %+v", in)
	}
	if a := got["absent"]; a.Object != nil {
		t.Errorf("inspect keys, absent key: %+v", a)
	}
}

// TestInspectLeavesTheIndexUnlocked: reading a closed store's index (as
// tests inspect a stopped peer) must not hold its lock, or the peer
// restarting on the dir at that moment fails to open its store.
func TestInspectLeavesTheIndexUnlocked(t *testing.T) {
	s := newStore(t)
	dir := s.Dir()
	if err := s.Commit(ctx, inlined("bkt", "k", stamp(1, "w"), []byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	err := readIndex(dir, func(r pebble.Reader) error {
		if _, err := readRecordIn(r, "bkt", "k"); err != nil {
			return err
		}
		again, err := Open(dir, DefaultConfig())
		if err != nil {
			return fmt.Errorf("open while the index is read: %w", err)
		}
		return again.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
