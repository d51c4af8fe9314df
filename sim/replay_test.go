package sim

import (
	"math"
	"slices"
	"testing"
	"time"
)

func replayParams() Params {
	p := DefaultParams()
	p.Requests, p.Burst, p.Objects, p.BenchSeed = 600, 10, 100, 1
	p.Codes, p.MaxSize = [][2]int{{6, 4}}, 16<<20
	return p
}

// The replay is the workload tessera bench offers: its objects, read in
// its order at its times, each object always on the same holders.
func TestReplayIsTheBenchWorkload(t *testing.T) {
	p := replayParams()
	w := generate(p)
	sizes := ObjectSizes(p.Objects, p.BenchSeed, p.MaxSize)
	var sum float64
	for _, s := range sizes {
		sum += float64(s)
	}
	at := Arrivals(p.Rho, p.Burst, p.Requests, p.BenchSeed, capacity(w.peers), sum/float64(len(sizes)))
	holders := map[int][]int{}
	for i, r := range w.reqs {
		obj := ObjectOf(i, p.Objects)
		if r.size != sizes[obj] || r.at != at[i] || r.n != 6 || r.k != 4 || r.gw != 0 {
			t.Fatalf("GET %d: size %d at %v (%d,%d), want object %d of %d bytes at %v", i, r.size, r.at, r.n, r.k, obj, sizes[obj], at[i])
		}
		if h, ok := holders[obj]; ok && !slices.Equal(h, r.peers) {
			t.Fatalf("object %d on %v, then on %v", obj, h, r.peers)
		}
		holders[obj] = r.peers
	}
	if len(holders) != p.Objects {
		t.Fatalf("%d objects read, want all %d", len(holders), p.Objects)
	}

	// Another run seed moves the objects but not the trace.
	q := p
	q.Seed = 2
	v := generate(q)
	moved := 0
	for i := range w.reqs {
		if v.reqs[i].at != w.reqs[i].at || v.reqs[i].size != w.reqs[i].size {
			t.Fatalf("GET %d changed with the run seed", i)
		}
		if !slices.Equal(v.reqs[i].peers, w.reqs[i].peers) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("the run seed did not change any placement")
	}
}

// ObjectSizes are the first draws of the ordinary workload, clipped.
func TestObjectSizes(t *testing.T) {
	p := DefaultParams()
	p.Requests = 50
	w := generate(p)
	got := ObjectSizes(50, 1, 1<<20)
	for i, r := range w.reqs {
		if want := min(r.size, 1<<20); got[i] != want {
			t.Fatalf("object %d: %d bytes, want %d", i, got[i], want)
		}
	}
}

func TestBurstMeans(t *testing.T) {
	r := Result{Latencies: []float64{0.010, 0.030, 0.100}, Bursts: []int{0, 0, 2}}
	got := burstMeans(r)
	want := []float64{20, -1, 100}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("burst means %v, want %v", got, want)
		}
	}
	if burstMeans(Result{Latencies: []float64{1}}) != nil {
		t.Fatal("burst means without burst numbers")
	}
}

// Sweep numbers the bursts of each seed after the last seed's.
func TestSweepBurstsPerSeed(t *testing.T) {
	p := small()
	p.Requests, p.Burst = 100, 10
	rows, err := Sweep(p, []string{"eta"}, []float64{0.5}, []int{10}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rows[0].BurstMeans); got != 30 {
		t.Fatalf("%d burst means, want 3 seeds x 10 bursts", got)
	}
	var sum float64
	for _, m := range rows[0].BurstMeans {
		if m < 0 {
			t.Fatalf("a burst without finished GETs: %v", rows[0].BurstMeans)
		}
		sum += m
	}
	// Every burst has p GETs, so the mean of burst means is the mean.
	if mean := sum / 30; math.Abs(mean-rows[0].Mean) > 1e-6*rows[0].Mean {
		t.Fatalf("mean of burst means %v, row mean %v", mean, rows[0].Mean)
	}
	// Each seed runs as many GETs, so the seeds' means average to it too.
	seeds := rows[0].SeedMeans
	if len(seeds) != 3 || math.Abs((seeds[0]+seeds[1]+seeds[2])/3-rows[0].Mean) > 1e-6*rows[0].Mean {
		t.Fatalf("seed means %v, row mean %v", seeds, rows[0].Mean)
	}
}

// A front end hands a burst's GETs to the pool one at a time: the last of
// a burst of p on an idle cluster waits p-1 turns more than the first.
func TestFrontend(t *testing.T) {
	p := DefaultParams()
	p.Peers, p.Requests, p.Burst, p.Rho = 4, 4, 4, 0.01
	p.Codes, p.MaxSize = [][2]int{{1, 1}}, 1<<10 // tiny reads: latency ~ setup
	base, err := Run("eta", p)
	if err != nil {
		t.Fatal(err)
	}
	p.Frontend = 10 * time.Millisecond
	fe, err := Run("eta", p)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(r Result) float64 {
		var s float64
		for _, l := range r.Latencies {
			s += l
		}
		return s
	}
	// Turns of 10, 20, 30 and 40 ms: 100 ms more in all, less a little
	// sharing of the peers that the spread-out reads no longer do.
	if got := sum(fe) - sum(base); math.Abs(got-0.100) > 0.5e-3 {
		t.Fatalf("front end added %v s over the burst, want 0.100", got)
	}
}

// With several codes, object i has code i mod len(codes), as `tessera
// bench --storage-classes` writes it, on n distinct peers.
func TestReplayCodesFollowBenchClasses(t *testing.T) {
	p := replayParams()
	p.Codes = [][2]int{{2, 1}, {4, 2}, {6, 3}, {10, 4}}
	for i, r := range generate(p).reqs {
		obj := ObjectOf(i, p.Objects)
		c := p.Codes[obj%len(p.Codes)]
		if r.n != c[0] || r.k != c[1] || len(r.peers) != r.n {
			t.Fatalf("GET %d of object %d: (%d,%d) on %v, want %v", i, obj, r.n, r.k, r.peers, c)
		}
		seen := map[int]bool{}
		for _, h := range r.peers {
			if seen[h] {
				t.Fatalf("GET %d: holders %v repeat a peer", i, r.peers)
			}
			seen[h] = true
		}
	}
}

// On one host every peer gossips the same CPU, so wlc-cpu has nothing to
// re-weight by and runs as wlc; on a host each, the slow NICs' low CPU
// steers it.
func TestOneHostCPU(t *testing.T) {
	for _, oneHost := range []bool{true, false} {
		p := replayParams()
		p.Mixed, p.OneHost, p.Requests = true, oneHost, 600
		wlc, cpu := runTwo(t, p, "wlc", "wlc-cpu")
		if same := slices.Equal(wlc.Latencies, cpu.Latencies); same != oneHost {
			t.Fatalf("one host %v: wlc and wlc-cpu alike %v", oneHost, same)
		}
	}
}

// The replay follows the gateway's paths around its pool: inlined objects
// need no fetch, and reads of chunks too large for the pool go outside it,
// in the gateway's own order, so the policy under test never sees them.
func TestReplayGatewayPaths(t *testing.T) {
	tests := []struct {
		name                  string
		inline, pooled        int64
		samePolicies, noFetch bool
	}{
		{name: "every read pooled"},
		{name: "every object inlined", inline: 16 << 20, samePolicies: true, noFetch: true},
		{name: "every read outside the pool", pooled: 1, samePolicies: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := replayParams()
			p.InlineLimit, p.MaxPooled = tc.inline, tc.pooled
			a, b := runTwo(t, p, "random", "serpt-r")
			if len(a.Latencies) != p.Requests || len(b.Latencies) != p.Requests {
				t.Fatalf("%d and %d GETs finished, want %d", len(a.Latencies), len(b.Latencies), p.Requests)
			}
			if same := slices.Equal(a.Latencies, b.Latencies); same != tc.samePolicies {
				t.Fatalf("random and serpt-r alike: %v, want %v", same, tc.samePolicies)
			}
			if tc.noFetch && (a.Moved != 0 || slices.Max(a.Latencies) != 0) {
				t.Fatalf("inlined reads moved %v bytes, slowest %v s", a.Moved, slices.Max(a.Latencies))
			}
			if tc.pooled > 0 && a.Moved != a.Needed {
				t.Fatalf("direct reads moved %v bytes for %v needed: exactly k chunks each", a.Moved, a.Needed)
			}
		})
	}
}

// runTwo runs policies a and b on the same workload.
func runTwo(t *testing.T, p Params, a, b string) (Result, Result) {
	t.Helper()
	ra, err := Run(a, p)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Run(b, p)
	if err != nil {
		t.Fatal(err)
	}
	return ra, rb
}
