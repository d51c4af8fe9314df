package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"tessera/meta"
)

// versions returns the stamps ReadVersions reports for bucket/key.
func versions(t *testing.T, s *Store, bucket, key string) []meta.Stamp {
	t.Helper()
	os, err := s.ReadVersions(ctx, bucket, key)
	if err != nil {
		t.Fatalf("read versions %s/%s: %v", bucket, key, err)
	}
	out := make([]meta.Stamp, len(os))
	for i, o := range os {
		out[i] = o.Stamp
	}
	return out
}

func wantVersions(t *testing.T, s *Store, what string, want ...meta.Stamp) {
	t.Helper()
	if got := versions(t, s, "bkt", "k"); !slices.Equal(got, want) {
		t.Fatalf("%s: versions %v, want %v", what, got, want)
	}
}

// commitKind writes version st of bucket/k as kind.
func commitKind(t *testing.T, s *Store, st meta.Stamp, kind stepKind) {
	t.Helper()
	if err := (step{st: st, kind: kind}).commit(t, s, "k"); err != nil {
		t.Fatalf("commit %v: %v", st, err)
	}
}

// TestKeptUntilSettled: every version a commit replaces stays readable,
// record and bytes, across a restart and its sweep, until a newer version
// is settled; settling drops exactly the older ones.
func TestKeptUntilSettled(t *testing.T) {
	kinds := map[string][]stepKind{
		"data":                    {withData, withData, withData},
		"inline, data, tombstone": {withInline, withData, tombstone},
		"data under inline":       {withData, withInline, withInline},
	}
	for name, ks := range kinds {
		t.Run(name, func(t *testing.T) {
			s := newStoreAt(t, -1, nil) // retired dirs go at once
			st := []meta.Stamp{stamp(10, "w"), stamp(20, "w"), stamp(30, "w")}
			for i, k := range ks {
				commitKind(t, s, st[i], k)
			}
			wantVersions(t, s, "before settling", st[2], st[1], st[0])
			s.Close()
			s = newStoreIn(t, s.Dir(), -1)
			waitSweep(s)
			wantVersions(t, s, "after a restart", st[2], st[1], st[0])
			checkKeptBytes(t, s, st, ks)
			settle(t, s, "bkt", "k", st[0]) // nothing older than it
			wantVersions(t, s, "settled the oldest", st[2], st[1], st[0])
			settle(t, s, "bkt", "k", st[1])
			wantVersions(t, s, "settled the middle one", st[2], st[1])
			if ks[0] == withData {
				if _, err := readShard(t, s, "bkt", "k", st[0], 1); !errors.Is(err, meta.ErrNotFound) {
					t.Fatalf("settled-away version's shard: %v, want not found", err)
				}
			}
			settle(t, s, "bkt", "k", st[2])
			wantVersions(t, s, "settled the newest", st[2])
			if n := len(dataDirs(t, s, "bkt", "k")); n != boolInt(ks[2] == withData) {
				t.Fatalf("%d data dirs left after settling", n)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkKeptBytes reads every kept version's bytes back by its stamp.
func checkKeptBytes(t *testing.T, s *Store, st []meta.Stamp, ks []stepKind) {
	t.Helper()
	os, err := s.ReadVersions(ctx, "bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range os {
		j := len(st) - 1 - i
		switch ks[j] {
		case withData:
			if got, err := readShard(t, s, "bkt", "k", st[j], 1); err != nil || !bytes.Equal(got, payload(st[j])) {
				t.Fatalf("version %v's shard: %v", st[j], err)
			}
		case withInline:
			if !o.Inlined || !bytes.Equal(o.Inline, payload(st[j])) {
				t.Fatalf("version %v's inline bytes differ", st[j])
			}
		default:
			if !o.Deleted {
				t.Fatalf("version %v is no tombstone", st[j])
			}
		}
	}
}

// TestKeptListBounded: versions replaced in a row, none settled, keep at
// most MaxKept; the oldest beyond it goes, data dir and all.
func TestKeptListBounded(t *testing.T) {
	s := newStoreAt(t, -1, nil)
	var all []meta.Stamp
	for i := range MaxKept + 2 {
		st := stamp(int64(i+1), "w")
		all = append(all, st)
		commitKind(t, s, st, withData)
	}
	slices.Reverse(all)
	wantVersions(t, s, "after a run of commits", all[:MaxKept+1]...)
	if n := len(dataDirs(t, s, "bkt", "k")); n != MaxKept+1 {
		t.Fatalf("%d data dirs, want %d", n, MaxKept+1)
	}
}

// TestRepairCommitSettles: a repair rewrites a version reads resolved as
// current, so it keeps nothing, over an older record or the same one.
func TestRepairCommitSettles(t *testing.T) {
	a, b, c := stamp(1, "w"), stamp(2, "w"), stamp(3, "w")
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprint("same version ", same), func(t *testing.T) {
			s := newStoreAt(t, -1, nil)
			commitKind(t, s, a, withData)
			commitKind(t, s, b, withData)
			fix := c
			if same {
				fix = b
			}
			id := stage(t, s, payload(fix))
			if err := s.RepairCommit(ctx, object("bkt", "k", fix, payload(fix)), []string{id}); err != nil {
				t.Fatal(err)
			}
			wantVersions(t, s, "after the repair", fix)
			if d := dataDirs(t, s, "bkt", "k"); !slices.Equal(d, []string{dataDirName(fix)}) {
				t.Fatalf("data dirs %v after the repair", d)
			}
		})
	}
}

// TestSettleIgnored: a settle for a version the peer does not hold yet,
// or on a key that keeps nothing, changes nothing, not even the record's
// generation.
func TestSettleIgnored(t *testing.T) {
	s := newStore(t)
	a, b, c := stamp(1, "w"), stamp(2, "w"), stamp(3, "w")
	if err := s.Settle(ctx, "bkt", "k", a); err != nil {
		t.Fatalf("settle of an absent key: %v", err)
	}
	commitKind(t, s, a, withData)
	before, err := s.StatRecord(ctx, "bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s, "bkt", "k", a)
	commitKind(t, s, b, withInline)
	settle(t, s, "bkt", "k", c) // newer than anything held
	wantVersions(t, s, "after a settle from the future", b, a)
	mid, err := s.StatRecord(ctx, "bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s, "bkt", "k", b)
	after, err := s.StatRecord(ctx, "bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	if SameRecord(before, mid) || !SameRecord(mid, after) {
		t.Fatalf("generations: a commit must change it, a settle must not")
	}
	if err := s.Settle(ctx, "bkt", "k", meta.Stamp{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("settle of a zero stamp: %v, want invalid", err)
	}
}

// TestKeptGoesWithTheKey: dropping the version, or the bucket, drops what
// it kept.
func TestKeptGoesWithTheKey(t *testing.T) {
	s := newStore(t)
	a, b := stamp(1, "w"), stamp(2, "w")
	commitKind(t, s, a, withData)
	commitKind(t, s, b, tombstone)
	if err := s.DropVersion(ctx, "bkt", "k", b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadVersions(ctx, "bkt", "k"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("read after the drop: %v, want not found", err)
	}
	commitKind(t, s, stamp(3, "w"), withData)
	if v, _ := s.get(keptKey("bkt", "k")); v != nil {
		t.Fatal("a fresh key after a drop inherited a kept list")
	}
	commitKind(t, s, stamp(4, "w"), tombstone)
	if err := s.DeleteBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.get(keptKey("bkt", "k")); v != nil {
		t.Fatal("the kept list outlived its bucket")
	}
}

// TestDamagedKeptList: a kept list that fails its checksum is a set of
// missing copies: ReadVersions still answers with the current record.
func TestDamagedKeptList(t *testing.T) {
	s := newStore(t)
	a, b := stamp(1, "w"), stamp(2, "w")
	commitKind(t, s, a, withInline)
	commitKind(t, s, b, withInline)
	v, err := s.get(keptKey("bkt", "k"))
	if err != nil || v == nil {
		t.Fatalf("kept list: %v", err)
	}
	v[len(v)/2] ^= 0x10
	wb := s.db.NewBatch()
	wb.Set(keptKey("bkt", "k"), v, nil)
	if err := s.apply(wb); err != nil {
		t.Fatal(err)
	}
	wantVersions(t, s, "with a damaged list", b)
}

// TestListMarksUnsettled: a listing line says whether its peer keeps
// versions the record replaced, which listings weigh as reads do.
func TestListMarksUnsettled(t *testing.T) {
	s := newStore(t)
	a, b := stamp(1, "w"), stamp(2, "w")
	unsettled := func() bool {
		t.Helper()
		es, err := s.List(ctx, "bkt", "", "", 10, "")
		if err != nil || len(es) != 1 {
			t.Fatalf("list: %v %+v", err, es)
		}
		return es[0].Unsettled
	}
	commitKind(t, s, a, withData)
	if unsettled() {
		t.Fatal("a first version is listed unsettled")
	}
	commitKind(t, s, b, withInline)
	if !unsettled() {
		t.Fatal("a version keeping the one it replaced is listed settled")
	}
	settle(t, s, "bkt", "k", b)
	if unsettled() {
		t.Fatal("a settled version is listed unsettled")
	}
}
