package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"tessera/meta"
)

func ids(n int) []meta.PeerID {
	out := make([]meta.PeerID, n)
	for i := range out {
		out[i] = meta.PeerID(fmt.Sprintf("p%d", i))
	}
	return out
}

func isPermutation(order []int, n int) bool {
	if len(order) != n {
		return false
	}
	s := slices.Clone(order)
	slices.Sort(s)
	for i, v := range s {
		if v != i {
			return false
		}
	}
	return true
}

func TestETAIdlePrefersDataShards(t *testing.T) {
	for _, c := range []struct{ k, m int }{{1, 0}, {2, 1}, {4, 2}, {6, 3}, {10, 4}} {
		tr := newTestTracker(newClock())
		got := NewETA(tr, ETAConfig{}).Order(ids(c.k+c.m), c.k, 1<<20)
		if !slices.Equal(got, identity(c.k+c.m)) {
			t.Errorf("%d+%d idle: order %v, want shard order", c.k, c.m, got)
		}
	}
}

func TestETAScenarios(t *testing.T) {
	const shard = 100
	fail := errors.New("reset")
	cases := []struct {
		name      string
		setup     func(tr *Tracker) // runs against peers p0..p5
		k         int
		wantFirst []int // the set of the first k indexes
		wantLast  []int // the exact tail, if set
	}{
		{
			name:      "loaded data peer swaps with parity",
			setup:     func(tr *Tracker) { tr.Begin("p1", 10*shard) },
			k:         4,
			wantFirst: []int{0, 2, 3, 4},
			wantLast:  []int{5, 1},
		},
		{
			name:      "slightly loaded data peer keeps its place",
			setup:     func(tr *Tracker) { tr.Begin("p1", shard/10) },
			k:         4,
			wantFirst: []int{0, 1, 2, 3},
		},
		{
			name:      "failed data peer goes last",
			setup:     func(tr *Tracker) { tr.Begin("p0", shard)(fail, 0, 0) },
			k:         4,
			wantFirst: []int{1, 2, 3, 4},
			wantLast:  []int{5, 0},
		},
		{
			name: "slow data peer replaced by fast parity",
			setup: func(tr *Tracker) {
				tr.Begin("p2", shard)(nil, shard, 100*time.Second) // 1 B/s vs 100 B/s prior
			},
			k:         4,
			wantFirst: []int{0, 1, 3, 4},
			wantLast:  []int{5, 2},
		},
		{
			name: "fast parity does not displace idle data",
			setup: func(tr *Tracker) {
				tr.Begin("p4", shard)(nil, shard, time.Millisecond)
			},
			k:         4,
			wantFirst: []int{0, 1, 2, 3},
		},
		{
			name: "every peer failed still yields all shards",
			setup: func(tr *Tracker) {
				for _, p := range ids(6) {
					tr.Begin(p, 1)(fail, 0, 0)
				}
			},
			k:         4,
			wantFirst: []int{0, 1, 2, 3},
		},
		{
			name: "failed peers ordered after loaded healthy ones",
			setup: func(tr *Tracker) {
				tr.Begin("p0", shard)(fail, 0, 0)
				tr.Begin("p1", shard)(fail, 0, 0)
				tr.Begin("p4", 50*shard)
			},
			k:         4,
			wantFirst: []int{2, 3, 5, 4},
			wantLast:  []int{0, 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newClock())
			tc.setup(tr)
			got := NewETA(tr, ETAConfig{}).Order(ids(6), tc.k, shard)
			if !isPermutation(got, 6) {
				t.Fatalf("not a permutation: %v", got)
			}
			first := slices.Sorted(slices.Values(got[:tc.k]))
			if !slices.Equal(first, slices.Sorted(slices.Values(tc.wantFirst))) {
				t.Errorf("first %d = %v (order %v), want set %v", tc.k, got[:tc.k], got, tc.wantFirst)
			}
			if tc.wantLast != nil && !slices.Equal(got[len(got)-len(tc.wantLast):], tc.wantLast) {
				t.Errorf("order %v, want tail %v", got, tc.wantLast)
			}
		})
	}
}

// A peer holding two shards of one object is charged for the first when
// the second is considered.
func TestETAChargesRepeatedPeer(t *testing.T) {
	peers := []meta.PeerID{"a", "a", "b", "c"}
	got := NewETA(newTestTracker(newClock()), ETAConfig{}).Order(peers, 2, 100)
	if !slices.Equal(got[:2], []int{0, 2}) {
		t.Fatalf("order %v, want shards 0 and 2 first", got)
	}
}

func TestETAPropertyPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	errFail := errors.New("x")
	for iter := range 2000 {
		c := newClock()
		tr := newTestTracker(c)
		n := rng.IntN(20)
		pool := ids(1 + rng.IntN(12))
		peers := make([]meta.PeerID, n)
		for i := range peers {
			peers[i] = pool[rng.IntN(len(pool))]
			if rng.IntN(15) == 0 {
				peers[i] = ""
			}
		}
		for range rng.IntN(30) {
			p := pool[rng.IntN(len(pool))]
			done := tr.Begin(p, rng.Int64N(1000))
			switch rng.IntN(4) {
			case 0:
				done(errFail, 0, 0)
			case 1:
				done(nil, rng.Int64N(5000), time.Duration(rng.Int64N(int64(time.Second))))
			case 2: // left in flight
			case 3:
				c.Advance(time.Duration(rng.Int64N(int64(5 * time.Second))))
			}
		}
		k := rng.IntN(n+4) - 2
		got := NewETA(tr, ETAConfig{}).Order(peers, k, rng.Int64N(2000)-100)
		if !isPermutation(got, n) {
			t.Fatalf("iter %d: n=%d k=%d: not a permutation: %v", iter, n, k, got)
		}
		views := tr.views(peers)
		seenFailed := false
		for _, i := range got {
			if views[i].failed {
				seenFailed = true
			} else if seenFailed {
				t.Fatalf("iter %d: healthy shard %d after a failed one in %v", iter, i, got)
			}
		}
	}
}

func TestRandomPolicy(t *testing.T) {
	r := NewRandom(42)
	orders := map[string]bool{}
	for range 200 {
		got := r.Order(ids(6), 4, 10)
		if !isPermutation(got, 6) {
			t.Fatalf("not a permutation: %v", got)
		}
		orders[fmt.Sprint(got)] = true
	}
	if len(orders) < 50 {
		t.Fatalf("only %d distinct orders in 200 draws", len(orders))
	}
	a, b := NewRandom(9).Order(ids(10), 3, 0), NewRandom(9).Order(ids(10), 3, 0)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different orders: %v %v", a, b)
	}
	if got := r.Order(nil, 0, 0); len(got) != 0 {
		t.Fatalf("empty input: %v", got)
	}
}

func TestNewPolicyByName(t *testing.T) {
	tr := NewTracker(TrackerConfig{})
	for _, name := range Names() {
		p, err := New(name, tr)
		if err != nil || p.Name() != name {
			t.Fatalf("New(%q) = %v, %v", name, p, err)
		}
	}
	if p, err := New("", tr); err != nil || p.Name() != DefaultPolicy {
		t.Fatalf("New(\"\") = %v, %v", p, err)
	}
	if _, err := New("fcfs-r", tr); !errors.Is(err, ErrUnknownPolicy) {
		t.Fatalf("unknown policy err = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	tr := NewTracker(TrackerConfig{})
	policies := []Policy{NewETA(tr, ETAConfig{}), NewRandom(1)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			peers := ids(6)
			for i := range 300 {
				done := tr.Begin(peers[(g+i)%6], 100)
				if got := policies[g%2].Order(peers, 4, 100); !isPermutation(got, 6) {
					t.Errorf("not a permutation: %v", got)
				}
				done(nil, 100, time.Millisecond)
			}
		})
	}
	wg.Wait()
	for id, s := range tr.Stats() {
		if s.InFlight != 0 {
			t.Errorf("%s: in flight %d after all done", id, s.InFlight)
		}
	}
}

func BenchmarkETAOrder(b *testing.B) {
	tr := NewTracker(TrackerConfig{})
	peers := ids(14)
	for i, p := range peers {
		tr.Begin(p, int64(i)*1000)
	}
	e := NewETA(tr, ETAConfig{})
	for b.Loop() {
		e.Order(peers, 10, 1<<20)
	}
}
