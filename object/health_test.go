package object

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"tessera/meta"
)

// fakeClock is a settable time source.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// Metadata deadlines follow the peer's recent p99 times latencyMult,
// within the floor and the ceiling; without enough samples the ceiling
// holds.
func TestHealthDeadline(t *testing.T) {
	const floor, ceil = time.Second, 5 * time.Second
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		want    time.Duration
	}{
		{"no samples", nil, ceil},
		{"too few", repeat(latencyMin-1, 10*time.Millisecond), ceil},
		{"fast peer: floor", repeat(latencyMin, 10*time.Millisecond), floor},
		{"p99 times the multiple", repeat(latencyMin, 300*time.Millisecond), latencyMult * 300 * time.Millisecond},
		{"slow peer: ceiling", repeat(latencyMin, 2*time.Second), ceil},
		{"one outlier in a hundred is the p99's",
			append(repeat(99, 10*time.Millisecond), 400*time.Millisecond), floor},
		{"two outliers in a hundred set it",
			append(repeat(98, 10*time.Millisecond), 400*time.Millisecond, 400*time.Millisecond), latencyMult * 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealth(floor, ceil, time.Second, time.Now)
			for _, d := range tc.samples {
				h.observe("p", d)
			}
			if got := h.deadline("p", ceil); got != tc.want {
				t.Errorf("deadline = %v, want %v", got, tc.want)
			}
		})
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// A stalled peer is avoided for the hold; then exactly one caller is let
// through as a probe while the others keep avoiding it; a stream that
// goes through clears the mark, a metadata answer does not.
func TestHealthStallHoldAndProbe(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	h := newHealth(time.Second, 5*time.Second, 2*time.Second, clk.now)
	const p = meta.PeerID("p")
	steps := []struct {
		do    func()
		avoid bool
		what  string
	}{
		{func() {}, false, "healthy peer"},
		{func() { h.stall(p) }, true, "just stalled"},
		{func() { clk.advance(time.Second) }, true, "within the hold"},
		{func() { h.observe(p, time.Millisecond) }, true, "a metadata answer does not clear the mark"},
		{func() { clk.advance(1500 * time.Millisecond) }, false, "hold over: one probe"},
		{func() {}, true, "others keep avoiding while the probe runs"},
		{func() { clk.advance(2 * time.Second) }, false, "the probe said nothing: another probe"},
		{func() { h.stall(p) }, true, "the probe stalled"},
		{func() { h.recovered(p) }, false, "a stream went through"},
		{func() {}, false, "and stays clear"},
	}
	for _, s := range steps {
		s.do()
		if got := h.avoid(p); got != s.avoid {
			t.Fatalf("%s: avoid = %v, want %v", s.what, got, s.avoid)
		}
	}
}

// p99 picks the sample a sort of the window would put at the 99th
// percentile, for every window length and with ties, without sorting.
func TestP99MatchesASortedWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= latencyWindow; n++ {
		for range 20 {
			p := &peerHealth{}
			for range n {
				p.lat = append(p.lat, time.Duration(rng.IntN(50))*time.Millisecond)
			}
			sorted := slices.Sorted(slices.Values(p.lat))
			if got, want := p.p99(), sorted[(n-1)*99/100]; got != want {
				t.Fatalf("n=%d: p99 %v, want %v (window %v)", n, got, want, p.lat)
			}
		}
	}
}

func BenchmarkHealthDeadline(b *testing.B) {
	h := newHealth(time.Millisecond, time.Second, time.Second, time.Now)
	for i := range latencyWindow {
		h.observe("p", time.Duration(i)*time.Microsecond)
	}
	for i := 0; b.Loop(); i++ {
		h.observe("p", time.Duration(i%500)*time.Microsecond)
		h.deadline("p", time.Second)
	}
}
