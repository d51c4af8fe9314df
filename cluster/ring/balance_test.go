package ring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"tessera/meta"
)

func weighted(ws ...float64) []Peer {
	ps := make([]Peer, len(ws))
	for i, w := range ws {
		ps[i] = Peer{ID: meta.PeerID(fmt.Sprintf("peer-%02d", i+1)), Weight: w}
	}
	return ps
}

// Capacities 1,1,1,2,2,4: once balanced, every peer's share of the circle
// is within 10% of its capacity fraction, and balancing again changes
// nothing (the counts have settled).
func TestBalanceHeterogeneous(t *testing.T) {
	for _, ws := range [][]float64{{1, 1, 1, 2, 2, 4}, {1, 1, 1, 1, 1, 1}, {3, 1}, {1, 5, 5, 5, 5, 5, 5, 5}} {
		t.Run(fmt.Sprint(ws), func(t *testing.T) {
			got := Balance(weighted(ws...), BalanceConfig{})
			r := mustNew(t, got, Config{})
			var total float64
			for _, w := range ws {
				total += w
			}
			for i, p := range got {
				want := ws[i] / total
				if s := r.Share(p.ID); math.Abs(s-want) > 0.10*want {
					t.Errorf("%s: share %.4f, capacity fraction %.4f (vnodes %d)", p.ID, s, want, p.Vnodes)
				}
			}
			if again := Balance(got, BalanceConfig{}); !reflect.DeepEqual(again, got) {
				t.Errorf("not settled: %v -> %v", counts(got), counts(again))
			}
		})
	}
}

func counts(ps []Peer) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Vnodes
	}
	return out
}

func TestBalanceDeterministic(t *testing.T) {
	ps := weighted(1, 2, 3, 4, 5)
	a := Balance(ps, BalanceConfig{})
	shuffled := slices.Clone(ps)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if b := Balance(shuffled, BalanceConfig{}); !reflect.DeepEqual(a, b) {
		t.Fatalf("order-dependent: %v vs %v", counts(a), counts(b))
	}
	ps[2].Weight = 0
	for _, p := range Balance(ps, BalanceConfig{}) {
		if p.ID == ps[2].ID && p.Vnodes != 0 {
			t.Fatalf("weight-0 peer got %d vnodes", p.Vnodes)
		}
	}
}

// Capacity jitter of ±1% for 1000 ticks must not keep the counts moving:
// the band absorbs it.
func TestBalanceNoOscillation(t *testing.T) {
	base := []float64{1, 1, 1, 2, 2, 4}
	cur := Balance(weighted(base...), BalanceConfig{})
	rng := rand.New(rand.NewPCG(5, 6))
	changes := 0
	for range 1000 {
		next := slices.Clone(cur)
		for i := range next {
			next[i].Weight = base[i] * (1 + (rng.Float64()*2-1)*0.01)
		}
		next = Balance(next, BalanceConfig{})
		if !slices.Equal(counts(next), counts(cur)) {
			changes++
		}
		cur = next
	}
	if changes > 10 {
		t.Fatalf("vnode counts changed on %d of 1000 ticks of ±1%% jitter", changes)
	}
	t.Logf("counts changed on %d of 1000 jitter ticks", changes)
}

// A peer joining the balanced ring takes about its capacity fraction of
// the first-choice keys, and the others' counts mostly stay.
func TestBalanceJoinMovesLittle(t *testing.T) {
	before := Balance(weighted(1, 1, 1, 2, 2, 4), BalanceConfig{})
	joined := append(slices.Clone(before), Peer{ID: "peer-07", Weight: 2})
	after := Balance(joined, BalanceConfig{})
	rb, ra := mustNew(t, before, Config{}), mustNew(t, after, Config{})
	moved := 0
	const keys = 20000
	for k := range keys {
		key := fmt.Sprintf("b/k%d", k)
		p1, _ := rb.Placement(key, 1)
		p2, _ := ra.Placement(key, 1)
		if p1[0] != p2[0] {
			moved++
		}
	}
	frac := float64(moved) / keys
	min := 2.0 / 13 // the newcomer's capacity fraction: the least that must move
	t.Logf("moved %.3f of keys; minimum %.3f; counts %v -> %v", frac, min, counts(before), counts(after))
	if frac > 1.3*min {
		t.Fatalf("moved %.3f of keys, more than 1.3 × the minimum %.3f", frac, min)
	}
}

// Random clusters: balancing settles (a fixed point) and puts every peer
// within 10% of its capacity fraction.
func TestBalanceRandomClusters(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for c := range 40 {
		ws := make([]float64, 3+rng.IntN(8))
		var total float64
		for i := range ws {
			ws[i] = float64(1 + rng.IntN(8))
			total += ws[i]
		}
		got := Balance(weighted(ws...), BalanceConfig{})
		if again := Balance(got, BalanceConfig{}); !reflect.DeepEqual(again, got) {
			t.Errorf("case %d %v: not settled: %v -> %v", c, ws, counts(got), counts(again))
			continue
		}
		r := mustNew(t, got, Config{})
		for i, p := range got {
			if want, s := ws[i]/total, r.Share(p.ID); math.Abs(s-want) > 0.10*want {
				t.Errorf("case %d %v: %s share %.4f, want %.4f ±10%%", c, ws, p.ID, s, want)
			}
		}
	}
}
