package ring

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"tessera/meta"
)

func equalPeers(n int) []Peer {
	ps := make([]Peer, n)
	for i := range ps {
		ps[i] = Peer{ID: meta.PeerID(fmt.Sprintf("peer-%02d", i+1)), Weight: 1}
	}
	return ps
}

func mustNew(t testing.TB, peers []Peer, cfg Config) *Ring {
	t.Helper()
	r, err := New(peers, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestNewRejectsInvalidPeers(t *testing.T) {
	cases := []struct {
		name  string
		peers []Peer
	}{
		{"empty id", []Peer{{ID: "", Weight: 1}}},
		{"duplicate", []Peer{{ID: "a", Weight: 1}, {ID: "a", Weight: 2}}},
		{"negative weight", []Peer{{ID: "a", Weight: -1}}},
		{"nan weight", []Peer{{ID: "a", Weight: math.NaN()}}},
		{"inf weight", []Peer{{ID: "a", Weight: math.Inf(1)}}},
		{"negative vnodes", []Peer{{ID: "a", Weight: 1, Vnodes: -3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.peers, Config{}); !errors.Is(err, ErrInvalidPeer) {
				t.Fatalf("err = %v, want ErrInvalidPeer", err)
			}
		})
	}
}

func TestDeterministicAcrossInputOrder(t *testing.T) {
	peers := equalPeers(9)
	peers[2].Weight = 2.5
	peers[4].Zone = "z1"
	peers[5].Vnodes = 7
	a := mustNew(t, peers, Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := slices.Clone(peers)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b := mustNew(t, shuffled, Config{})
		if !reflect.DeepEqual(a.tokens, b.tokens) || !reflect.DeepEqual(a.peers, b.peers) {
			t.Fatal("rings built from shuffled input differ")
		}
		for k := range 200 {
			key := fmt.Sprintf("bucket/obj-%d", k)
			pa, _ := a.Placement(key, 4)
			pb, _ := b.Placement(key, 4)
			if !slices.Equal(pa, pb) {
				t.Fatalf("placement of %q: %v vs %v", key, pa, pb)
			}
		}
	}
}

func TestVnodeCounts(t *testing.T) {
	r := mustNew(t, []Peer{
		{ID: "a", Weight: 1},
		{ID: "b", Weight: 2.5},
		{ID: "c", Weight: 0.001}, // rounds to 0 but keeps one token
		{ID: "d", Weight: 0},     // decommissioned
		{ID: "e", Weight: 1, Vnodes: 5},
	}, Config{VnodesPerWeight: 10})
	want := map[meta.PeerID]int{"a": 10, "b": 25, "c": 1, "d": 0, "e": 5, "unknown": 0}
	for id, n := range want {
		if got := r.Vnodes(id); got != n {
			t.Errorf("Vnodes(%s) = %d, want %d", id, got, n)
		}
	}
	if got := len(r.tokens); got != 41 {
		t.Errorf("tokens = %d, want 41", got)
	}
	if r.Len() != 5 || len(r.Peers()) != 5 {
		t.Errorf("Len = %d, Peers = %d, want 5", r.Len(), len(r.Peers()))
	}
	if r.Share("d") != 0 {
		t.Errorf("Share of tokenless peer = %v", r.Share("d"))
	}
}

func TestSharesProportionalToWeight(t *testing.T) {
	peers := []Peer{
		{ID: "small", Weight: 1}, {ID: "mid-1", Weight: 2}, {ID: "mid-2", Weight: 2},
		{ID: "big", Weight: 4}, {ID: "tiny", Weight: 1},
	}
	r := mustNew(t, peers, Config{VnodesPerWeight: 128})
	var total, sum float64
	for _, p := range peers {
		total += p.Weight
		sum += r.Share(p.ID)
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("shares sum to %v", sum)
	}
	for _, p := range peers {
		want := p.Weight / total
		got := r.Share(p.ID)
		if math.Abs(got-want)/want > 0.25 {
			t.Errorf("share(%s) = %.3f, want %.3f ±25%%", p.ID, got, want)
		}
	}
}

func TestShareMatchesFirstChoiceFrequency(t *testing.T) {
	r := mustNew(t, equalPeers(5), Config{})
	counts := map[meta.PeerID]int{}
	const keys = 50000
	for k := range keys {
		p, err := r.Placement(fmt.Sprintf("k%d", k), 1)
		if err != nil {
			t.Fatal(err)
		}
		counts[p[0]]++
	}
	for _, p := range r.Peers() {
		got := float64(counts[p.ID]) / keys
		if math.Abs(got-r.Share(p.ID)) > 0.01 {
			t.Errorf("%s: first choice %.4f of keys, Share %.4f", p.ID, got, r.Share(p.ID))
		}
	}
}

func TestSinglePeerOwnsEverything(t *testing.T) {
	r := mustNew(t, []Peer{{ID: "only", Weight: 1}, {ID: "gone", Weight: 0}}, Config{})
	if s := r.Share("only"); s != 1 {
		t.Fatalf("Share = %v, want 1", s)
	}
}
