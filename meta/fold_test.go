package meta

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestCommonPrefix(t *testing.T) {
	for _, tc := range []struct{ key, prefix, delim, want string }{
		{"a/b/c", "", "/", "a/"},
		{"a/b/c", "a/", "/", "a/b/"},
		{"a/b", "a/", "/", ""},
		{"abc", "", "", ""},
		{"x/y", "a", "/", ""},
		{"a--b--c", "a", "--", "a--"},
	} {
		if got := CommonPrefix(tc.key, tc.prefix, tc.delim); got != tc.want {
			t.Errorf("CommonPrefix(%q, %q, %q) = %q, want %q", tc.key, tc.prefix, tc.delim, got, tc.want)
		}
	}
}

// sortedScan serves scan over es (sorted by key), counting entries read.
func sortedScan(es []Entry, read *int) func(after string, n int) []Entry {
	return func(after string, n int) []Entry {
		i, _ := slices.BinarySearchFunc(es, after, func(e Entry, k string) int { return strings.Compare(e.Key, k) })
		var out []Entry
		for ; i < len(es) && len(out) < n; i++ {
			if es[i].Key > after {
				out = append(out, es[i])
			}
		}
		*read += len(out)
		return out
	}
}

func keysOf(es []Entry) []string {
	var out []string
	for _, e := range es {
		k := e.Key
		if e.Deleted {
			k += " (deleted)"
		}
		if e.Folded {
			k += " (folded)"
		}
		out = append(out, k)
	}
	return out
}

func TestFoldEntries(t *testing.T) {
	es := []Entry{
		{Key: "a/1", Deleted: true}, {Key: "a/2"}, {Key: "a/3"}, {Key: "a/4"},
		{Key: "b"},
		{Key: "c/1", Deleted: true}, {Key: "c/2", Deleted: true},
		{Key: "d/x/1"}, {Key: "d/x/2"}, {Key: "d/y"},
		{Key: "e/" + string(rune(0x10FFFF)) + "z"},
	}
	for _, tc := range []struct {
		prefix, after string
		limit         int
		want          []string
	}{
		{"", "", 100, []string{"a/1 (deleted)", "a/2 (folded)", "b", "c/1 (deleted)", "c/2 (deleted)", "d/x/1 (folded)", "e/\U0010FFFFz (folded)"}},
		{"", "", 2, []string{"a/1 (deleted)", "a/2 (folded)"}},
		{"", PastPrefix("a/"), 3, []string{"b", "c/1 (deleted)", "c/2 (deleted)"}},
		{"d/", "", 100, []string{"d/x/1 (folded)", "d/y"}},
		{"a/", "", 100, []string{"a/1 (deleted)", "a/2", "a/3", "a/4"}},
	} {
		t.Run(fmt.Sprintf("%q after %q limit %d", tc.prefix, tc.after, tc.limit), func(t *testing.T) {
			var under []Entry
			for _, e := range es {
				if strings.HasPrefix(e.Key, tc.prefix) {
					under = append(under, e)
				}
			}
			var read int
			got := FoldEntries(sortedScan(under, &read), tc.prefix, "/", tc.after, tc.limit)
			if !reflect.DeepEqual(keysOf(got), tc.want) {
				t.Fatalf("got %q, want %q", keysOf(got), tc.want)
			}
		})
	}
}

// TestFoldEntriesSeeks checks that folding reads about one entry per
// common prefix, not every key under it.
func TestFoldEntriesSeeks(t *testing.T) {
	var es []Entry
	for d := range 100 {
		for k := range 100 {
			es = append(es, Entry{Key: fmt.Sprintf("d%03d/%03d", d, k)})
		}
	}
	var read int
	got := FoldEntries(sortedScan(es, &read), "", "/", "", 1000)
	if len(got) != 100 {
		t.Fatalf("%d entries, want one per prefix", len(got))
	}
	if read > 2*100 {
		t.Fatalf("read %d entries of %d for 100 prefixes", read, len(es))
	}
}
