package sim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"time"
)

// Params describes one simulated run.
type Params struct {
	Peers    int
	Gateways int
	Slots    int     // fetch pool per gateway, L
	Rho      float64 // offered load / aggregate peer bandwidth
	Burst    int     // GETs per burst, p
	Requests int
	Seed     uint64
	Hetero   bool     // mixed NICs and on/off background load
	Mixed    bool     // mixed NICs only (no background load)
	Codes    [][2]int // (n, k) codes drawn uniformly per object; nil: Codes
	MaxSize  int64    // largest object; 0: 64 MiB
	// NoPeerOrder makes peers ignore fetch priorities: every transfer
	// shares the link, tagged or not.
	NoPeerOrder bool
	PeerBW      float64       // bytes/s of a full-speed peer (1 GbE = 125e6)
	Setup       time.Duration // per-chunk fixed cost at the peer
	Shape       float64       // Weibull shape of burst gaps
}

// DefaultParams returns 10 peers at 1 GbE, one gateway, L=20, 2 ms setup.
func DefaultParams() Params {
	return Params{Peers: 10, Gateways: 1, Slots: 20, Rho: 0.5, Burst: 100, Requests: 20000,
		Seed: 1, PeerBW: 125e6, Setup: 2 * time.Millisecond, Shape: 0.8}
}

// Codes are the (n, k) codes of seed 000, chosen uniformly per object.
var Codes = [][2]int{{2, 1}, {4, 2}, {6, 3}, {10, 4}}

// Object sizes are lognormal with P(size < 4 MiB) = 0.90 and
// P(size < 16 MiB) = 0.99, clipped to [1 KiB, 64 MiB].
var (
	sizeSigma = math.Log(4) / (2.3263 - 1.2816)
	sizeMu    = math.Log(4<<20) - 1.2816*sizeSigma
)

const (
	minSize = 1 << 10
	maxSize = 64 << 20
	// Background load (hetero): 3 peers in 10 lose bgShare of their NIC
	// while on; on and off holds are exponential, on bgOnFrac of the time.
	bgShare  = 0.6
	bgOnFrac = 0.3
	bgOnHold = 2.0 // seconds
)

// MeanSize is the mean object size of the workload.
func MeanSize() float64 { return math.Exp(sizeMu + sizeSigma*sizeSigma/2) }

// req is one GET of the workload.
type req struct {
	at    float64 // seconds
	size  int64
	n, k  int
	peers []int // holders of shards 0..n-1
	gw    int
}

// peerSpec is one modelled peer.
type peerSpec struct {
	bw   float64
	bg   bool
	seed uint64 // its background toggles
}

// workload is everything random about a run that does not depend on the
// policy, so policies are compared on the same draws.
type workload struct {
	reqs  []req
	peers []peerSpec
}

func peerSpeeds(p Params) []peerSpec {
	out := make([]peerSpec, p.Peers)
	for i := range out {
		out[i] = peerSpec{bw: p.PeerBW, seed: p.Seed*1_000_003 + uint64(i)}
		switch {
		case !p.Hetero && !p.Mixed:
		case i%10 == 8:
			out[i].bw = p.PeerBW / 2
		case i%10 == 9:
			out[i].bw = p.PeerBW / 4
		case p.Hetero && (i%10 == 0 || i%10 == 3 || i%10 == 6):
			out[i].bg = true
		}
	}
	return out
}

func generate(p Params) workload {
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	peers := peerSpeeds(p)
	var capacity float64
	for _, s := range peers {
		capacity += s.bw
	}
	meanGap := float64(p.Burst) * MeanSize() / (p.Rho * capacity)
	scale := meanGap / math.Gamma(1+1/p.Shape)
	reqs := make([]req, p.Requests)
	t := 0.0
	perm := make([]int, p.Peers)
	for i := range perm {
		perm[i] = i
	}
	for i := range reqs {
		if i > 0 && i%p.Burst == 0 {
			t += scale * math.Pow(-math.Log(1-rng.Float64()), 1/p.Shape)
		}
		codes := p.Codes
		if len(codes) == 0 {
			codes = Codes
		}
		c := codes[rng.IntN(len(codes))]
		n := min(c[0], p.Peers)
		size := int64(math.Exp(sizeMu + sizeSigma*rng.NormFloat64()))
		size = min(max(size, minSize), cmp.Or(p.MaxSize, maxSize))
		for j := range n { // partial Fisher-Yates: n distinct peers
			x := j + rng.IntN(p.Peers-j)
			perm[j], perm[x] = perm[x], perm[j]
		}
		reqs[i] = req{at: t, size: size, n: n, k: min(c[1], n), peers: append([]int(nil), perm[:n]...),
			gw: i % max(p.Gateways, 1)}
	}
	return workload{reqs: reqs, peers: peers}
}

// TraceGET is one GET of a workload: when (seconds from the start) and
// how large the object is.
type TraceGET struct {
	At   float64
	Size int64
}

// Trace returns the arrival times and sizes of p's workload, for load
// generators against a real cluster; capacity there is PeerBW x Peers.
func Trace(p Params) []TraceGET {
	w := generate(p)
	out := make([]TraceGET, len(w.reqs))
	for i, r := range w.reqs {
		out[i] = TraceGET{At: r.at, Size: r.size}
	}
	return out
}
