package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tessera/sched"
)

func small() Params {
	p := DefaultParams()
	p.Requests = 600
	return p
}

func TestWorkloadShape(t *testing.T) {
	p := DefaultParams()
	p.Requests = 20000
	w := generate(p)
	var under4, under16 int
	for _, r := range w.reqs {
		if r.size < 4<<20 {
			under4++
		}
		if r.size < 16<<20 {
			under16++
		}
		seen := map[int]bool{}
		for _, pi := range r.peers {
			if seen[pi] || pi < 0 || pi >= p.Peers {
				t.Fatalf("bad placement %v", r.peers)
			}
			seen[pi] = true
		}
	}
	f4, f16 := float64(under4)/float64(len(w.reqs)), float64(under16)/float64(len(w.reqs))
	if math.Abs(f4-0.90) > 0.01 || math.Abs(f16-0.99) > 0.005 {
		t.Fatalf("P(<4MiB)=%.3f P(<16MiB)=%.3f, want 0.90 and 0.99", f4, f16)
	}
	// ρ: offered bytes over the span match the target within sampling noise.
	var bytes float64
	for _, r := range w.reqs {
		bytes += float64(r.size)
	}
	span := w.reqs[len(w.reqs)-1].at
	rho := bytes / span / (float64(p.Peers) * p.PeerBW)
	if math.Abs(rho-p.Rho)/p.Rho > 0.15 {
		t.Fatalf("offered load %.3f, want about %.2f", rho, p.Rho)
	}
}

func TestCommonRandomNumbers(t *testing.T) {
	a, b := small(), small()
	if !reflect.DeepEqual(generate(a), generate(b)) {
		t.Fatal("same seed, different workloads")
	}
	r1, err := Run("eta", a)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := Run("eta", a)
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("a run is not deterministic")
	}
}

// Every policy finishes every GET and moves at least the bytes needed;
// the policies without redundancy move almost exactly that.
func TestEveryPolicyCompletes(t *testing.T) {
	for _, gws := range []int{1, 2} {
		for _, hetero := range []bool{false, true} {
			p := small()
			p.Gateways, p.Hetero = gws, hetero
			for _, pol := range sched.Policies() {
				res, err := Run(pol, p)
				if err != nil {
					t.Fatal(err)
				}
				row := Summarise(res)
				if row.Requests != p.Requests || row.Failed != 0 {
					t.Fatalf("%s g=%d: %d finished, %d failed of %d", pol, gws, row.Requests, row.Failed, p.Requests)
				}
				if row.Amp < 0.999 {
					t.Fatalf("%s: moved %.3f of needed", pol, row.Amp)
				}
				if pol != "fcfs-r" && pol != "serpt-r" && row.Amp > 1.05 {
					t.Fatalf("%s: moved %.3f of needed", pol, row.Amp)
				}
			}
		}
	}
}

// A lone GET on idle peers takes setup + the largest chunk's transfer.
func TestIdleLatencyMatchesModel(t *testing.T) {
	p := small()
	p.Requests = 1
	w := generate(p)
	res, err := runOn("eta", p, w)
	if err != nil {
		t.Fatal(err)
	}
	q := w.reqs[0]
	chunk := float64((q.size + int64(q.k) - 1) / int64(q.k))
	want := p.Setup.Seconds() + chunk/p.PeerBW
	if got := res.Latencies[0]; math.Abs(got-want) > 1e-9 {
		t.Fatalf("latency %v, want %v", got, want)
	}
}

func TestOutputs(t *testing.T) {
	rows, err := Sweep(small(), []string{"eta", "load"}, []float64{0.1}, []int{10, 50}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rows); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || len(got.Runs) != 4 {
		t.Fatalf("json %v: %s", err, buf.String())
	}
	for _, k := range []string{"policy", "rho", "burst", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "var_ms2", "amp"} {
		if _, ok := got.Runs[0][k]; !ok {
			t.Fatalf("json run lacks %q", k)
		}
	}
	buf.Reset()
	if err := WriteTable(&buf, rows); err != nil || !strings.Contains(buf.String(), "policy load") {
		t.Fatalf("table %v:\n%s", err, buf.String())
	}
	dir := t.TempDir()
	files, err := WriteSVGs(dir, rows)
	if err != nil || len(files) != 3 {
		t.Fatalf("svgs %v %v", files, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "mean-rho0.1.svg"))
	if !strings.Contains(string(b), "<polyline") || !strings.Contains(string(b), "load") {
		t.Fatal("chart has no lines")
	}
}

// BenchmarkThousandPeersMillionGETs is the scale target: 1,000 peers and
// 1,000,000 GETs under the default policy, one gateway with a pool of
// 1,000, ρ=0.5, bursts of 100.
func BenchmarkThousandPeersMillionGETs(b *testing.B) {
	p := DefaultParams()
	p.Peers, p.Requests, p.Burst, p.Rho, p.Slots = 1000, 1_000_000, 100, 0.5, 1000
	for b.Loop() {
		if _, err := Run("eta", p); err != nil {
			b.Fatal(err)
		}
	}
}

// On one peer, a small read arriving during a large one's transfer: with
// peer order (eta's tagged fetches) it takes the link and finishes in its
// own transfer time; without, it shares the link and takes twice that.
func TestPeerOrder(t *testing.T) {
	p := DefaultParams()
	p.Peers, p.Requests = 1, 2
	w := workload{
		reqs: []req{
			{at: 0, size: 10_000_000, n: 1, k: 1, peers: []int{0}},
			{at: 0.010, size: 1_000_000, n: 1, k: 1, peers: []int{0}},
		},
		peers: []peerSpec{{bw: p.PeerBW}},
	}
	setup := p.Setup.Seconds()
	for _, tc := range []struct {
		order      bool
		small, big float64 // latencies, seconds
	}{
		{true, setup + 1e6/p.PeerBW, setup + 11e6/p.PeerBW},
		{false, setup + 2e6/p.PeerBW, setup + 11e6/p.PeerBW},
	} {
		p.NoPeerOrder = !tc.order
		res, err := runOn("eta", p, w)
		if err != nil {
			t.Fatal(err)
		}
		// Latencies are in finishing order: the small read first either way.
		if len(res.Latencies) != 2 || math.Abs(res.Latencies[0]-tc.small) > 1e-9 || math.Abs(res.Latencies[1]-tc.big) > 1e-9 {
			t.Errorf("peer order %v: latencies %v, want [%v %v]", tc.order, res.Latencies, tc.small, tc.big)
		}
	}
}

// The default policy's standing at a few points where the margins are
// wide (the full sweep is `tessera sim`, figures in SCHEDULING.md): mean
// at most 0.7x SERPT-R's and 0.6x LOAD's, p99 at most 0.7x SERPT-R's,
// bytes moved at most 1.05x needed.
func TestDefaultPolicyTargets(t *testing.T) {
	for _, tc := range []struct {
		hetero   bool
		gateways int
		rho      float64
		burst    int
	}{
		{false, 1, 0.5, 50},
		{true, 1, 0.5, 100},
		{false, 2, 0.1, 100},
		{true, 2, 0.5, 200},
	} {
		p := DefaultParams()
		p.Requests, p.Hetero, p.Gateways, p.Rho, p.Burst = 4000, tc.hetero, tc.gateways, tc.rho, tc.burst
		w := generate(p)
		rows := map[string]Row{}
		for _, pol := range []string{"eta", "serpt-r", "load"} {
			res, err := runOn(pol, p, w)
			if err != nil {
				t.Fatal(err)
			}
			rows[pol] = Summarise(res)
		}
		e, s, l := rows["eta"], rows["serpt-r"], rows["load"]
		if e.Mean > 0.7*s.Mean || e.Mean > 0.6*l.Mean || e.P99 > 0.7*s.P99 || e.Amp > 1.05 {
			t.Errorf("%+v: eta mean %.1f p99 %.1f amp %.3f; SERPT-R mean %.1f p99 %.1f; LOAD mean %.1f",
				tc, e.Mean, e.P99, e.Amp, s.Mean, s.P99, l.Mean)
		}
	}
}
