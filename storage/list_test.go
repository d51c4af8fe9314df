package storage

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"tessera/meta"
)

// sameFanKeys returns two distinct keys whose hashes share the two-char
// fan-out dir, so they live side by side on disk.
func sameFanKeys(t *testing.T) (string, string) {
	seen := map[string]string{}
	for i := 0; i < 10000; i++ {
		k := fmt.Sprintf("fan/%d", i)
		h := keyHash(k)[:2]
		if other, ok := seen[h]; ok {
			return other, k
		}
		seen[h] = k
	}
	t.Fatal("no shared fan-out dir in 10000 keys")
	return "", ""
}

func listKeys(t *testing.T) map[string]bool {
	f1, f2 := sameFanKeys(t)
	keys := map[string]bool{ // value: committed as a tombstone
		"a": false, "a/": false, "a/b": false, "a/b/c": true, "a/b/../c": false, "a/b/./c": false,
		"..": false, "../x": false, "/leading": false, "b": true, "b/": false, "é": false, "日本/語": false,
		"日本/語/x": false, "z\x00nul": false, " space": false, "~tilde": false,
		strings.Repeat("k", MaxKeyLen): false, strings.Repeat("é", MaxKeyLen/2): false,
		f1: false, f2: true,
	}
	return keys
}

// model is the reference listing: sorted keys with the prefix, after
// `after`, at most limit of them.
func model(keys map[string]bool, prefix, after string, limit int) []string {
	var out []string
	for k := range keys {
		if strings.HasPrefix(k, prefix) && k > after {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if limit <= 0 {
		limit = DefaultListLimit
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func TestList(t *testing.T) {
	s := newStore(t)
	keys := listKeys(t)
	i := int64(1)
	for k, del := range keys {
		var err error
		if del {
			err = s.Commit(ctx, object("bkt", k, stamp(i, "w")), nil)
		} else if i%2 == 0 {
			err = s.Commit(ctx, inlined("bkt", k, stamp(i, "w"), []byte(k)), nil)
		} else {
			err = put(t, s, "bkt", k, stamp(i, "w"), []byte(k))
		}
		if err != nil {
			t.Fatalf("commit %q: %v", k, err)
		}
		i++
	}
	mustMakeBucket(t, s, "other")
	if err := put(t, s, "other", "a/zzz", stamp(1, "w"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		prefix, after string
		limit         int
	}{
		{"", "", 0}, {"", "", 3}, {"a", "", 0}, {"a/", "", 0}, {"a/", "a/b", 0}, {"a/b", "a/b/../c", 2},
		{"", "b", 0}, {"", "a/b/c", 1}, {"日本", "", 0}, {"日本/語", "日本/語", 0}, {"..", "", 0},
		{"zzz", "", 0}, {"", "\U0010FFFF", 0}, {"b", "a", 0}, {"a", "b", 0}, {"k", "", 0},
		{"fan/", "", 0}, {"", "", -5},
	}
	check := func(t *testing.T, s *Store) {
		for _, tc := range cases {
			got, err := s.List(ctx, "bkt", tc.prefix, tc.after, tc.limit, "")
			if err != nil {
				t.Fatalf("list %+v: %v", tc, err)
			}
			want := model(keys, tc.prefix, tc.after, tc.limit)
			if len(got) != len(want) {
				t.Fatalf("list %+v: %d entries, want %d", tc, len(got), len(want))
			}
			for j, e := range got {
				if e.Key != want[j] || e.Deleted != keys[e.Key] {
					t.Fatalf("list %+v [%d]: %q deleted=%v, want %q", tc, j, e.Key, e.Deleted, want[j])
				}
			}
			// With a delimiter: the unfolded listing, folded.
			folded, err := s.List(ctx, "bkt", tc.prefix, tc.after, tc.limit, "/")
			if err != nil {
				t.Fatalf("list %+v folded: %v", tc, err)
			}
			scan := func(after string, n int) []meta.Entry {
				es, err := s.List(ctx, "bkt", tc.prefix, after, n, "")
				if err != nil {
					t.Fatal(err)
				}
				return es
			}
			wantFolded := meta.FoldEntries(scan, tc.prefix, "/", tc.after, listLimit(tc.limit))
			if fmt.Sprint(folded) != fmt.Sprint(wantFolded) {
				t.Fatalf("list %+v folded:\n got %v\nwant %v", tc, folded, wantFolded)
			}
		}
		// Paging one entry at a time visits every key once, in order.
		var paged []string
		for after := ""; ; {
			page, err := s.List(ctx, "bkt", "", after, 1, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page[0].Key)
			after = page[0].Key
		}
		if want := model(keys, "", "", len(keys)); strings.Join(paged, "\n") != strings.Join(want, "\n") {
			t.Fatalf("paging: got %q, want %q", paged, want)
		}
	}
	t.Run("live", func(t *testing.T) { check(t, s) })
	t.Run("reopened", func(t *testing.T) { check(t, reopen(t, s)) })
}

func TestListErrors(t *testing.T) {
	s := newStore(t)
	if _, err := s.List(ctx, "nope", "", "", 0, ""); !errorsIs(err, meta.ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := s.List(ctx, "../bkt", "", "", 0, ""); !errorsIs(err, ErrInvalidArgument) {
		t.Fatalf("bad bucket: %v", err)
	}
	got, err := s.List(ctx, "bkt", "", "", 0, "")
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty bucket: %v %v", got, err)
	}
}

func TestListLimitCap(t *testing.T) {
	s := newStore(t)
	var objs []*meta.Object
	for i := 0; i < MaxListLimit+10; i++ {
		objs = append(objs, inlined("bkt", fmt.Sprintf("%06d", i), stamp(1, "w"), []byte("x")))
	}
	putRaw(t, s, objs...)
	got, err := s.List(ctx, "bkt", "", "", MaxListLimit*2, "")
	if err != nil || len(got) != MaxListLimit {
		t.Fatalf("limit not capped: %d %v", len(got), err)
	}
	if n := s.LiveObjects(); n != MaxListLimit+10 {
		t.Fatalf("live %d", n)
	}
	for range 2 {
		if err := s.Commit(ctx, object("bkt", "000000", stamp(2, "w")), nil); err != nil && !errorsIs(err, meta.ErrStale) {
			t.Fatal(err)
		}
	}
	if n := s.LiveObjects(); n != MaxListLimit+9 {
		t.Fatalf("live after tombstones %d", n)
	}
}
