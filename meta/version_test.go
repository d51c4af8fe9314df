package meta

import (
	"sort"
	"testing"
)

func TestVersionIDOrder(t *testing.T) {
	ids := []string{NewVersionID(100), NewVersionID(300), NewVersionID(200), NewVersionID(1_700_000_000_000_000_000)}
	for _, id := range ids {
		if !ValidVersionID(id) {
			t.Fatalf("%q is not a valid version ID", id)
		}
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	want := []string{ids[3], ids[1], ids[2], ids[0]}
	for i := range want {
		if sorted[i] != want[i] {
			t.Fatalf("sorted %v, want newest first %v", sorted, want)
		}
	}
	if got := VersionNanos(ids[2]); got != 200 {
		t.Fatalf("VersionNanos = %d, want 200", got)
	}
	if a, b := NewVersionID(5), NewVersionID(5); a == b {
		t.Fatalf("two IDs of one nanosecond are equal: %s", a)
	}
}

func TestSplitVersion(t *testing.T) {
	id := NewVersionID(42)
	tests := []struct {
		stored, key, id string
		ok              bool
	}{
		{VersionKey("a/b", id), "a/b", id, true},
		{VersionKey("a"+VersionSep+"b", id), "a" + VersionSep + "b", id, true},
		{"a/b", "a/b", "", false},
		{VersionSep + id, VersionSep + id, "", false}, // no key before it
		{"k" + VersionSep + id[:23], "k" + VersionSep + id[:23], "", false},
		{"k" + VersionSep + id[:23] + "g", "k" + VersionSep + id[:23] + "g", "", false},
		{"k" + VersionSep + "A" + id[1:], "k" + VersionSep + "A" + id[1:], "", false}, // upper case
		{"k/" + id, "k/" + id, "", false},
	}
	for _, tc := range tests {
		key, gotID, ok := SplitVersion(tc.stored)
		if key != tc.key || gotID != tc.id || ok != tc.ok {
			t.Errorf("SplitVersion(%q) = %q, %q, %v; want %q, %q, %v", tc.stored, key, gotID, ok, tc.key, tc.id, tc.ok)
		}
		if PlacementKey(tc.stored) != tc.key {
			t.Errorf("PlacementKey(%q) = %q, want %q", tc.stored, PlacementKey(tc.stored), tc.key)
		}
	}
}

// A key's versions sort right after it and before every longer key, so a
// listing meets them together.
func TestVersionKeysSortWithTheirKey(t *testing.T) {
	id := NewVersionID(7)
	keys := []string{"a/", "a", VersionKey("a", id), "a!", "a" + "\x01"}
	sort.Strings(keys)
	want := []string{"a", VersionKey("a", id), "a\x01", "a!", "a/"}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("sorted %q, want %q", keys, want)
		}
	}
}
