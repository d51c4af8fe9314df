package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
)

// Interval is a difference of mean latencies, mean(A) - mean(B) in ms,
// with its 95% bootstrap interval.
type Interval struct{ Diff, Lo, Hi float64 }

// Resolved reports whether the interval excludes zero: the run tells
// which of the two policies has the lower mean.
func (i Interval) Resolved() bool { return i.Lo > 0 || i.Hi < 0 }

// Flip is a pair of policies the simulation orders A before B (lower
// mean first) and the live run B before A.
type Flip struct {
	A, B      string
	Sim, Live Interval
	// Held and Seeds: A's mean was below B's in Held of the simulation's
	// Seeds runs (0 of 0 without per-seed means).
	Held, Seeds int
}

// SimResolved reports whether the simulation settles the pair for the
// live cluster: its interval excludes zero and, the live cluster being
// one placement of the objects where each seed is another, the order
// held in every seed. An order that held in all of n placements fails
// on one more with a chance of at most 1/(n+1).
func (f Flip) SimResolved() bool { return f.Sim.Resolved() && f.Held == f.Seeds }

// Contradiction reports whether both runs resolve the pair: the two
// orders then really differ, not merely within noise.
func (f Flip) Contradiction() bool { return f.SimResolved() && f.Live.Resolved() }

// Agreement compares the order of policies by mean latency at one
// (ρ, p) point, simulated against live.
type Agreement struct {
	Rho       float64
	Burst     int
	Sim, Live []string // policies, lowest mean first
	Tau       float64  // Kendall's τ between the two orders
	Flips     []Flip
}

// Agree compares every (ρ, p) point that sim and live both hold. Pairs
// are differenced burst by burst (burst b holds the same GETs under every
// policy), so the intervals are paired.
func Agree(sim, live []Row) []Agreement {
	type point struct {
		rho   float64
		burst int
	}
	group := func(rows []Row) map[point]map[string]Row {
		out := map[point]map[string]Row{}
		for _, r := range rows {
			k := point{r.Rho, r.Burst}
			if out[k] == nil {
				out[k] = map[string]Row{}
			}
			out[k][r.Policy] = r
		}
		return out
	}
	s, l := group(sim), group(live)
	var out []Agreement
	for k, srows := range s {
		lrows, ok := l[k]
		if !ok {
			continue
		}
		var pols []string
		for p := range srows {
			if _, ok := lrows[p]; ok {
				pols = append(pols, p)
			}
		}
		a := Agreement{Rho: k.rho, Burst: k.burst, Sim: byMean(pols, srows), Live: byMean(pols, lrows)}
		a.Tau, a.Flips = compareOrders(a.Sim, srows, lrows)
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y Agreement) int {
		return cmp.Or(cmp.Compare(x.Rho, y.Rho), cmp.Compare(x.Burst, y.Burst))
	})
	return out
}

func byMean(pols []string, rows map[string]Row) []string {
	out := slices.Clone(pols)
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(rows[a].Mean, rows[b].Mean), strings.Compare(a, b)) })
	return out
}

// compareOrders walks every pair in the simulated order.
func compareOrders(simOrder []string, srows, lrows map[string]Row) (float64, []Flip) {
	var concord, discord int
	var flips []Flip
	for i, a := range simOrder {
		for _, b := range simOrder[i+1:] {
			ls := lrows[a].Mean - lrows[b].Mean
			switch {
			case ls < 0:
				concord++
			case ls > 0:
				discord++
				f := Flip{A: a, B: b,
					Sim:  PairedDiff(srows[a].BurstMeans, srows[b].BurstMeans, srows[a].Mean-srows[b].Mean),
					Live: PairedDiff(lrows[a].BurstMeans, lrows[b].BurstMeans, ls)}
				f.Held, f.Seeds = held(srows[a].SeedMeans, srows[b].SeedMeans)
				flips = append(flips, f)
			}
		}
	}
	if concord+discord == 0 {
		return 1, nil
	}
	return float64(concord-discord) / float64(concord+discord), flips
}

// held counts the seeds in which a's mean was below b's.
func held(a, b []float64) (n, of int) {
	for i := range min(len(a), len(b)) {
		if a[i] < b[i] {
			n++
		}
		of++
	}
	return n, of
}

// bootstrapRounds is enough for stable 2.5% and 97.5% quantiles.
const bootstrapRounds = 2000

// PairedDiff returns diff with the 95% bootstrap interval of the mean of
// a[i] - b[i] over bursts (resampled with replacement, a fixed seed so
// the figures repeat). Bursts missing from either side (-1) are left
// out; with fewer than two left, the interval is unbounded.
func PairedDiff(a, b []float64, diff float64) Interval {
	var d []float64
	for i := range min(len(a), len(b)) {
		if a[i] >= 0 && b[i] >= 0 {
			d = append(d, a[i]-b[i])
		}
	}
	if len(d) < 2 {
		return Interval{Diff: diff, Lo: -1e308, Hi: 1e308}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	means := make([]float64, bootstrapRounds)
	for r := range means {
		var sum float64
		for range d {
			sum += d[rng.IntN(len(d))]
		}
		means[r] = sum / float64(len(d))
	}
	slices.Sort(means)
	return Interval{Diff: diff, Lo: means[bootstrapRounds*25/1000], Hi: means[bootstrapRounds*975/1000-1]}
}

// WriteAgreement prints each point's two orders, τ, and every pair the
// two order differently, with whether each side resolves it, then how
// many of those pairs both resolve.
func WriteAgreement(w io.Writer, as []Agreement) error {
	for _, a := range as {
		fmt.Fprintf(w, "ρ=%g p=%d  Kendall τ %.2f\n  simulated: %s\n  live:      %s\n",
			a.Rho, a.Burst, a.Tau, strings.Join(a.Sim, " < "), strings.Join(a.Live, " < "))
		contra := 0
		for _, f := range a.Flips {
			verdict := "within noise"
			if f.Contradiction() {
				verdict = "CONTRADICTION"
				contra++
			}
			fmt.Fprintf(w, "  %s before %s in simulation: sim %s, live %s: %s\n", f.A, f.B, describeSim(f), describe(f.Live), verdict)
		}
		fmt.Fprintf(w, "  %d of %d pairs ordered differently, %d resolved both ways\n",
			len(a.Flips), len(a.Sim)*(len(a.Sim)-1)/2, contra)
	}
	return nil
}

// describeSim adds in how many seeds the simulated order held; the pair
// is resolved only if in all.
func describeSim(f Flip) string {
	if f.Seeds == 0 {
		return describe(f.Sim)
	}
	verdict := "unresolved"
	if f.SimResolved() {
		verdict = "resolved"
	}
	return fmt.Sprintf("%+.0f ms [%+.0f, %+.0f] in %d/%d seeds %s", f.Sim.Diff, f.Sim.Lo, f.Sim.Hi, f.Held, f.Seeds, verdict)
}

func describe(i Interval) string {
	verdict := "unresolved"
	if i.Resolved() {
		verdict = "resolved"
	}
	return fmt.Sprintf("%+.0f ms [%+.0f, %+.0f] %s", i.Diff, i.Lo, i.Hi, verdict)
}

// ReadJSON reads rows as WriteJSON prints them.
func ReadJSON(r io.Reader) ([]Row, error) {
	var v struct {
		Runs []Row `json:"runs"`
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, fmt.Errorf("sim: read runs: %w", err)
	}
	return v.Runs, nil
}
