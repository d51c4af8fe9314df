package sim

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestPairedDiff(t *testing.T) {
	cases := []struct {
		name     string
		a, b     []float64
		resolved bool
	}{
		{"a always 5 ms slower", []float64{10, 20, 30, 40}, []float64{5, 15, 25, 35}, true},
		{"a always 5 ms faster", []float64{5, 15, 25, 35}, []float64{10, 20, 30, 40}, true},
		{"no consistent sign", []float64{10, 30, 10, 30, 10, 30}, []float64{20, 20, 20, 20, 20, 20}, false},
		{"one usable burst", []float64{10, -1}, []float64{5, 5}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			iv := PairedDiff(tc.a, tc.b, 0)
			if iv.Resolved() != tc.resolved {
				t.Fatalf("%+v resolved=%v, want %v", iv, iv.Resolved(), tc.resolved)
			}
			if iv.Lo > iv.Hi {
				t.Fatalf("interval %+v upside down", iv)
			}
		})
	}
	// A constant difference is its own interval.
	iv := PairedDiff([]float64{10, 20, 30}, []float64{5, 15, 25}, 5)
	if iv.Lo != 5 || iv.Hi != 5 {
		t.Fatalf("constant difference 5 gave %+v", iv)
	}
}

func TestAgree(t *testing.T) {
	row := func(pol string, bursts ...float64) Row {
		var sum float64
		for _, b := range bursts {
			sum += b
		}
		return Row{Policy: pol, Rho: 0.5, Burst: 10, Mean: sum / float64(len(bursts)), BurstMeans: bursts}
	}
	sim := []Row{row("a", 1, 1, 1, 1), row("b", 2, 2, 2, 2), row("c", 3, 3, 3, 3)}
	live := []Row{
		row("a", 1, 1, 1, 1),
		row("b", 4, 2, 4, 2), // b and c trade places, within noise
		row("c", 3, 3, 3, 2),
		{Policy: "a", Rho: 0.1, Burst: 10, Mean: 1}, // no simulated point to compare
	}
	got := Agree(sim, live)
	if len(got) != 1 {
		t.Fatalf("%d points, want 1", len(got))
	}
	a := got[0]
	if strings.Join(a.Sim, ",") != "a,b,c" || strings.Join(a.Live, ",") != "a,c,b" {
		t.Fatalf("orders %v / %v", a.Sim, a.Live)
	}
	if math.Abs(a.Tau-1.0/3) > 1e-9 {
		t.Fatalf("τ %v, want 1/3", a.Tau)
	}
	if len(a.Flips) != 1 || a.Flips[0].A != "b" || a.Flips[0].B != "c" {
		t.Fatalf("flips %+v, want b before c", a.Flips)
	}
	f := a.Flips[0]
	if !f.Sim.Resolved() || f.Live.Resolved() || f.Contradiction() {
		t.Fatalf("flip %+v: want resolved in simulation, not live", f)
	}
	// A live run that resolves the swap too contradicts the simulation.
	live[1], live[2] = row("b", 4, 4, 4, 4), row("c", 3, 3, 3, 3)
	if f := Agree(sim, live)[0].Flips[0]; !f.Contradiction() {
		t.Fatalf("flip %+v: want a contradiction", f)
	}
	// The live cluster is one placement: an order the simulation's
	// seeds (placements) do not all share settles nothing for it.
	sim[1].SeedMeans, sim[2].SeedMeans = []float64{2, 2, 4}, []float64{3, 3, 3}
	f = Agree(sim, live)[0].Flips[0]
	if f.Held != 2 || f.Seeds != 3 || f.SimResolved() || f.Contradiction() {
		t.Fatalf("flip %+v: want held in 2 of 3 seeds, unresolved", f)
	}
	sim[1].SeedMeans = []float64{2, 2, 2}
	if f := Agree(sim, live)[0].Flips[0]; !f.SimResolved() || !f.Contradiction() {
		t.Fatalf("flip %+v: held in every seed, want a contradiction", f)
	}
	var out bytes.Buffer
	if err := WriteAgreement(&out, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Kendall τ 0.33", "b before c", "within noise", "1 of 3 pairs ordered differently, 0 resolved both ways"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReadJSONRoundTrip(t *testing.T) {
	rows := []Row{{Policy: "eta", Rho: 0.5, Burst: 10, Mean: 12.5, BurstMeans: []float64{10, 15}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&buf)
	if err != nil || len(got) != 1 || got[0].Mean != 12.5 || len(got[0].BurstMeans) != 2 {
		t.Fatalf("read back %+v, %v", got, err)
	}
}
