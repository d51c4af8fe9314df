package ring

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tessera/meta"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestPlacementDistinctPeers(t *testing.T) {
	r := mustNew(t, equalPeers(8), Config{})
	for n := 1; n <= 8; n++ {
		for k := range 300 {
			p, err := r.Placement(fmt.Sprintf("b/k%d", k), n)
			if err != nil {
				t.Fatal(err)
			}
			if len(p) != n {
				t.Fatalf("len = %d, want %d", len(p), n)
			}
			if s := slices.Clone(p); len(slices.Compact(sortIDs(s))) != n {
				t.Fatalf("duplicate peers in %v", p)
			}
		}
	}
}

func sortIDs(s []meta.PeerID) []meta.PeerID { slices.Sort(s); return s }

func TestPlacementTooManyPeers(t *testing.T) {
	peers := equalPeers(4)
	peers[3].Weight = 0 // listed, but cannot hold shards
	r := mustNew(t, peers, Config{})
	cases := []struct {
		n   int
		err error
	}{{0, ErrNotEnoughPeers}, {-1, ErrNotEnoughPeers}, {3, nil}, {4, ErrNotEnoughPeers}, {5, ErrNotEnoughPeers}}
	for _, tc := range cases {
		if _, err := r.Placement("k", tc.n); !errors.Is(err, tc.err) {
			t.Errorf("n=%d: err = %v, want %v", tc.n, err, tc.err)
		}
	}
	empty := mustNew(t, nil, Config{})
	if _, err := empty.Placement("k", 1); !errors.Is(err, ErrNotEnoughPeers) {
		t.Errorf("empty ring: err = %v", err)
	}
}

func TestPlacementSkipsTokenlessPeer(t *testing.T) {
	peers := equalPeers(4)
	peers[0].Weight = 0
	r := mustNew(t, peers, Config{})
	for k := range 500 {
		p, _ := r.Placement(fmt.Sprint(k), 3)
		if slices.Contains(p, peers[0].ID) {
			t.Fatalf("weight-0 peer placed: %v", p)
		}
	}
}

// Adding a seventh peer may only admit that peer into a key's set, and it
// should do so for about n/7 of the keys (its share of first-n slots).
func TestMinimalMovementOnJoin(t *testing.T) {
	for _, n := range []int{1, 3, 6} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			peers := equalPeers(7)
			before := mustNew(t, peers[:6], Config{})
			after := mustNew(t, peers, Config{})
			newID := peers[6].ID
			moved := movedFraction(t, before, after, newID, n, 20000)
			want := float64(n) / 7
			if math.Abs(moved-want) > 0.2*want {
				t.Errorf("moved %.3f of keys, want %.3f ±20%%", moved, want)
			}
			// For n=1 a key moves exactly when the newcomer owns its arc.
			if share := after.Share(newID); n == 1 && math.Abs(moved-share) > 0.01 {
				t.Errorf("moved %.4f of keys, newcomer's share %.4f", moved, share)
			}
		})
	}
}

// With zones, a join may also evict the peer the newcomer displaces in
// its zone, but a key's set still changes by at most one swap.
func TestMinimalMovementWithZones(t *testing.T) {
	peers := equalPeers(9)
	for i := range peers {
		peers[i].Zone = fmt.Sprintf("z%d", i%3)
	}
	before := mustNew(t, peers[:8], Config{})
	after := mustNew(t, peers, Config{})
	moved := movedFraction(t, before, after, peers[8].ID, 4, 20000)
	if want := 4.0 / 9; math.Abs(moved-want) > 0.25*want {
		t.Errorf("moved %.3f of keys, want %.3f ±25%%", moved, want)
	}
}

// movedFraction checks that every changed set differs from the old one by
// exactly newID in and one peer out, and returns the changed fraction.
func movedFraction(t *testing.T, before, after *Ring, newID meta.PeerID, n, keys int) float64 {
	t.Helper()
	changed := 0
	for k := range keys {
		key := fmt.Sprintf("bucket/key-%d", k)
		old, err1 := before.Placement(key, n)
		cur, err2 := after.Placement(key, n)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		added := diff(cur, old)
		if len(added) == 0 {
			continue
		}
		changed++
		if len(added) != 1 || added[0] != newID {
			t.Fatalf("key %q: %v -> %v admits %v, want only %s", key, old, cur, added, newID)
		}
	}
	return float64(changed) / float64(keys)
}

func diff(a, b []meta.PeerID) []meta.PeerID {
	var out []meta.PeerID
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestPlacementSpreadsZones(t *testing.T) {
	peers := []Peer{
		{ID: "a1", Weight: 1, Zone: "a"}, {ID: "a2", Weight: 1, Zone: "a"}, {ID: "a3", Weight: 1, Zone: "a"},
		{ID: "b1", Weight: 1, Zone: "b"}, {ID: "b2", Weight: 1, Zone: "b"},
		{ID: "c1", Weight: 1, Zone: "c"},
	}
	r := mustNew(t, peers, Config{})
	zoneOf := func(id meta.PeerID) byte { return id[0] }
	for k := range 500 {
		key := fmt.Sprintf("k%d", k)
		p, err := r.Placement(key, 5)
		if err != nil {
			t.Fatal(err)
		}
		// The first three shards cover all three zones.
		zs := map[byte]bool{zoneOf(p[0]): true, zoneOf(p[1]): true, zoneOf(p[2]): true}
		if len(zs) != 3 {
			t.Fatalf("%q: first shards %v share a zone", key, p[:3])
		}
		if len(slices.Compact(sortIDs(slices.Clone(p)))) != 5 {
			t.Fatalf("%q: duplicate in %v", key, p)
		}
	}
}

// The placement of fixed keys on a fixed ring is an on-disk contract:
// objects are found where their placement says. Any change to hashing or
// walking shows up here; rewrite with -update only for a deliberate,
// migrated format change.
func TestPlacementGolden(t *testing.T) {
	flat := mustNew(t, equalPeers(6), Config{})
	zoned := equalPeers(6)
	for i := range zoned {
		zoned[i].Zone = fmt.Sprintf("z%d", i%2)
	}
	zonedRing := mustNew(t, zoned, Config{})
	var b strings.Builder
	for k := range 40 {
		key := fmt.Sprintf("photos/%04d.jpg", k)
		p1, _ := flat.Placement(key, 6)
		p2, _ := zonedRing.Placement(key, 4)
		fmt.Fprintf(&b, "%s flat=%v zoned=%v\n", key, p1, p2)
	}
	path := filepath.Join("testdata", "placement.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("placement changed from %s:\n%s", path, b.String())
	}
}

func BenchmarkPlacement(b *testing.B) {
	r := mustNew(b, equalPeers(12), Config{})
	for i := 0; b.Loop(); i++ {
		if _, err := r.Placement(fmt.Sprintf("bucket/key-%d", i), 6); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	peers := equalPeers(50)
	for b.Loop() {
		if _, err := New(peers, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
