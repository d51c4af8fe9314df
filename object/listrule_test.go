package object

import (
	"testing"

	"tessera/meta"
)

func TestListedVersion(t *testing.T) {
	l, _ := newTestLayer(t) // 4+2: k = 4, write quorum 4
	old, next := meta.Stamp{Nanos: 1, Writer: "w"}, meta.Stamp{Nanos: 2, Writer: "w"}
	line := func(st meta.Stamp, deleted, unsettled bool) meta.Entry {
		return meta.Entry{Key: "k", Stamp: st, Deleted: deleted, Unsettled: unsettled}
	}
	lines := func(n int, e meta.Entry) []meta.Entry {
		out := make([]meta.Entry, n)
		for i := range out {
			out[i] = e
		}
		return out
	}
	cases := []struct {
		name    string
		es      []meta.Entry
		failed  int
		stamp   meta.Stamp
		deleted bool
	}{
		{"every peer agrees", lines(6, line(old, false, false)), 0, old, false},
		{"a write quorum of the newest", append(lines(4, line(next, false, true)), lines(2, line(old, false, false))...), 0, next, false},
		{"newest on three, the rest keep the old", append(lines(3, line(next, false, true)), lines(3, line(old, false, false))...), 0, old, false},
		{"a delete on three", append(lines(3, line(next, true, true)), lines(3, line(old, false, false))...), 0, old, false},
		{"newest on three, nothing kept", append(lines(3, line(next, false, false)), lines(3, line(old, false, false))...), 0, next, false},
		{"newest on three, a peer silent", append(lines(3, line(next, false, true)), lines(2, line(old, false, false))...), 1, next, false},
		{"a first write on three", lines(3, line(next, false, false)), 0, next, true},
		{"a first write on three, two silent", lines(3, line(next, false, false)), 2, next, false},
		{"a delete everywhere", lines(6, line(next, true, false)), 0, next, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := l.listedVersion(tc.es, tc.failed)
			if got.Stamp != tc.stamp || got.Deleted != tc.deleted {
				t.Fatalf("listed %v deleted %v, want %v deleted %v", got.Stamp, got.Deleted, tc.stamp, tc.deleted)
			}
		})
	}
}
