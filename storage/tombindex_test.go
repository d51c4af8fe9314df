package storage

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// tombstoneKeys lists every tombstone of bucket stamped before nanos,
// page by page of limit, as "key@nanos".
func tombstoneKeys(t *testing.T, s *Store, bucket string, before int64, limit int) []string {
	t.Helper()
	var out []string
	var after meta.Entry
	for {
		page, err := s.ListTombstones(ctx, bucket, time.Unix(0, before), after, limit)
		if err != nil {
			t.Fatalf("list tombstones: %v", err)
		}
		for _, e := range page {
			if !e.Deleted || e.Key == "" {
				t.Fatalf("entry %+v is not a tombstone", e)
			}
			out = append(out, fmt.Sprintf("%s@%d", e.Key, e.Stamp.Nanos))
		}
		if len(page) < limit {
			return out
		}
		after = page[len(page)-1]
	}
}

func TestListTombstones(t *testing.T) {
	s := newStore(t)
	mustMakeBucket(t, s, "other")
	commit := func(bucket, key string, nanos int64, live bool) {
		t.Helper()
		var err error
		if live {
			err = put(t, s, bucket, key, stamp(nanos, "w"), []byte(key))
		} else {
			err = s.Commit(ctx, object(bucket, key, stamp(nanos, "w")), nil)
		}
		if err != nil {
			t.Fatalf("commit %s/%s@%d: %v", bucket, key, nanos, err)
		}
	}
	// Stamps out of key order, so the listing's order is the stamps'.
	commit("bkt", "c", 30, false)
	commit("bkt", "a", 50, false)
	commit("bkt", "b\x00nul", 10, false)
	commit("bkt", "b", 10, false) // the same stamp: key order breaks the tie
	commit("bkt", "live", 5, true)
	commit("bkt", "revived", 20, false)
	commit("bkt", "revived", 25, true) // a write after the delete
	commit("bkt", "twice", 15, false)
	commit("bkt", "twice", 40, false) // a newer tombstone replaces the older
	commit("bkt", "dropped", 35, false)
	if err := s.DropVersion(ctx, "bkt", "dropped", stamp(35, "w")); err != nil {
		t.Fatal(err)
	}
	commit("other", "a", 1, false)

	want := []string{"b@10", "b\x00nul@10", "c@30", "twice@40", "a@50"}
	for _, limit := range []int{1, 2, 3, 100} {
		if got := tombstoneKeys(t, s, "bkt", 1000, limit); !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
	if got := tombstoneKeys(t, s, "bkt", 30, 100); !slices.Equal(got, want[:2]) {
		t.Errorf("before 30: %q, want %q", got, want[:2])
	}
	if got := tombstoneKeys(t, s, "bkt", 10, 100); len(got) != 0 {
		t.Errorf("before 10: %q, want none", got)
	}
	s = reopen(t, s)
	if got := tombstoneKeys(t, s, "bkt", 1000, 100); !slices.Equal(got, want) {
		t.Errorf("after a restart: %q, want %q", got, want)
	}
	if _, err := s.ListTombstones(ctx, "nope", time.Now(), meta.Entry{}, 10); !errorsIs(err, meta.ErrBucketNotFound) {
		t.Errorf("missing bucket: %v, want ErrBucketNotFound", err)
	}

	// A bucket deleted and made again has none of the old ones.
	if err := s.DeleteBucket(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	mustMakeBucket(t, s, "other")
	if got := tombstoneKeys(t, s, "other", 1000, 100); len(got) != 0 {
		t.Errorf("re-made bucket: %q, want none", got)
	}
}

// An index entry whose record has changed without it (the record was
// damaged when replaced) is left out and removed.
func TestListTombstonesStaleEntry(t *testing.T) {
	s := newStore(t)
	if err := s.Commit(ctx, object("bkt", "k", stamp(10, "w")), nil); err != nil {
		t.Fatal(err)
	}
	if err := put(t, s, "bkt", "k", stamp(20, "w"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	b := s.db.NewBatch()
	b.Set(tombKey("bkt", 10, "k"), nil, nil)
	b.Set(tombKey("bkt", 12, "gone"), nil, nil)
	if err := s.apply(b); err != nil {
		t.Fatal(err)
	}
	if got := tombstoneKeys(t, s, "bkt", 1000, 100); len(got) != 0 {
		t.Fatalf("stale entries listed: %q", got)
	}
	for _, k := range [][]byte{tombKey("bkt", 10, "k"), tombKey("bkt", 12, "gone")} {
		if v, err := s.get(k); err != nil || v != nil {
			t.Errorf("stale entry %q still there (%v)", k, err)
		}
	}
}

// A store whose index predates tombstone entries gets them at its next
// Open, once.
func TestTombstonesIndexedAtOpen(t *testing.T) {
	s := newStore(t)
	var want []string
	for i := range 25 {
		key := fmt.Sprintf("k%02d", i)
		if i%5 == 0 {
			if err := put(t, s, "bkt", key, stamp(int64(100+i), "w"), []byte(key)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := s.Commit(ctx, object("bkt", key, stamp(int64(100+i), "w")), nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s@%d", key, 100+i))
	}
	if err := s.DamageRecord("bkt", "k01", func(n int) int { return n / 2 }); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(k string) bool { return k == "k01@101" })
	// What an older store holds: records, no entries, no marker.
	b := s.db.NewBatch()
	p := tombPrefix("bkt")
	b.DeleteRange(p, prefixEnd(p), nil)
	b.Delete(markerKey(markerTombIndex), nil)
	if err := s.applyWith(b, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if got := tombstoneKeys(t, s, "bkt", 1000, 100); len(got) != 0 {
		t.Fatalf("before reopening: %q, want none", got)
	}
	s = reopen(t, s)
	if got := tombstoneKeys(t, s, "bkt", 1000, 7); !slices.Equal(got, want) {
		t.Fatalf("after reopening: %q, want %q", got, want)
	}
	if v, err := s.get(markerKey(markerTombIndex)); err != nil || v == nil {
		t.Fatalf("no marker after indexing (%v)", err)
	}
}
