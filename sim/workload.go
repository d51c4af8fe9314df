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
	// Frontend is each GET's handling at its gateway before the read
	// reaches the fetch pool (request parsing, authentication, metadata
	// reads), served one GET at a time per gateway: the host CPU a live
	// gateway queues behind when a burst lands. 0: reads reach the pool
	// on arrival, all of a burst at once.
	Frontend time.Duration
	// OneHost puts every peer on one host, as the live benchmark does:
	// each gossips the host's CPU, the mean of all peers', so wlc-cpu
	// cannot tell them apart by it.
	OneHost bool
	// Objects > 0 replays `tessera bench`'s workload instead of fresh
	// draws: Objects objects sized by BenchSeed (ObjectSizes), GET i
	// reading object ObjectOf(i, Objects) at Arrivals' times. Object i
	// has code i mod len(Codes) (bench --storage-classes) and one
	// placement drawn from Seed, which then varies only placements and
	// background load.
	Objects   int
	BenchSeed uint64
	// InlineLimit and MaxPooled, with Objects, follow a gateway's paths
	// around its fetch pool: an object of at most InlineLimit bytes is
	// read from its metadata record (no shard fetch), and one whose
	// chunks exceed MaxPooled streams outside the pool, from the k
	// holders a fixed ETA order picks, whatever the policy. 0: every GET
	// goes through the pool. The gateway now sends every GET through its
	// pool (inlined objects' fetches are served from memory, so they take
	// no link time); MaxPooled = object.MaxPooledShard replays the
	// gateway before that, against which the live figures in
	// SCHEDULING.md were taken.
	InlineLimit, MaxPooled int64
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
	if p.Objects > 0 {
		return replay(p)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	peers := peerSpeeds(p)
	meanGap := float64(p.Burst) * MeanSize() / (p.Rho * capacity(peers))
	scale := meanGap / math.Gamma(1+1/p.Shape)
	reqs := make([]req, p.Requests)
	t := 0.0
	perm := identity(p.Peers)
	for i := range reqs {
		if i > 0 && i%p.Burst == 0 {
			t += scale * math.Pow(-math.Log(1-rng.Float64()), 1/p.Shape)
		}
		reqs[i] = draw(rng, p, perm, func() int64 {
			size := int64(math.Exp(sizeMu + sizeSigma*rng.NormFloat64()))
			return min(max(size, minSize), cmp.Or(p.MaxSize, maxSize))
		})
		reqs[i].at, reqs[i].gw = t, i%max(p.Gateways, 1)
	}
	return workload{reqs: reqs, peers: peers}
}

// codes returns the codes objects are drawn from: Codes unless p names some.
func (p Params) codes() [][2]int {
	if len(p.Codes) == 0 {
		return Codes
	}
	return p.Codes
}

// draw picks an object's code, then its size, then its n holders, in the
// order the workload's random stream has always used.
func draw(rng *rand.Rand, p Params, perm []int, size func() int64) req {
	codes := p.codes()
	c := codes[rng.IntN(len(codes))]
	n := min(c[0], p.Peers)
	s := size()
	for j := range n { // partial Fisher-Yates: n distinct peers
		x := j + rng.IntN(p.Peers-j)
		perm[j], perm[x] = perm[x], perm[j]
	}
	return req{size: s, n: n, k: min(c[1], n), peers: append([]int(nil), perm[:n]...)}
}

// replay builds the workload `tessera bench` offers a live cluster.
func replay(p Params) workload {
	peers := peerSpeeds(p)
	sizes := ObjectSizes(p.Objects, p.BenchSeed, cmp.Or(p.MaxSize, maxSize))
	var sum float64
	objs := make([]req, len(sizes))
	rng := rand.New(rand.NewPCG(p.Seed, 0x0b1ec75))
	perm := identity(p.Peers)
	codes := p.codes()
	for i, s := range sizes {
		sum += float64(s)
		// Object i has code i mod len(codes), as `tessera bench
		// --storage-classes` writes it; with one code the random stream
		// is the one replays have always used.
		one := p
		one.Codes = [][2]int{codes[i%len(codes)]}
		objs[i] = draw(rng, one, perm, func() int64 { return s })
	}
	at := Arrivals(p.Rho, p.Burst, p.Requests, p.BenchSeed, capacity(peers), sum/float64(len(sizes)))
	reqs := make([]req, len(at))
	for i, t := range at {
		reqs[i] = objs[ObjectOf(i, len(objs))]
		reqs[i].at, reqs[i].gw = t, i%max(p.Gateways, 1)
	}
	return workload{reqs: reqs, peers: peers}
}

func capacity(peers []peerSpec) float64 {
	var c float64
	for _, s := range peers {
		c += s.bw
	}
	return c
}

func identity(n int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return perm
}

// ObjectSizes returns the sizes of the n objects `tessera bench` writes
// for seed: the workload's first n draws, clipped to maxSize.
func ObjectSizes(n int, seed uint64, maxSize int64) []int64 {
	p := DefaultParams()
	p.Requests, p.Seed = n, seed
	w := generate(p)
	out := make([]int64, n)
	for i, r := range w.reqs {
		out[i] = min(r.size, maxSize)
	}
	return out
}

// Arrivals returns the arrival times, in seconds from the start, of
// requests GETs in bursts of burst at load rho of capacity bytes/s, for
// objects of mean size meanSize: the gaps of seed's workload, scaled.
func Arrivals(rho float64, burst, requests int, seed uint64, capacity, meanSize float64) []float64 {
	p := DefaultParams()
	p.Peers, p.Rho, p.Burst, p.Requests, p.Seed = 1, rho, burst, requests, seed
	p.PeerBW = capacity * MeanSize() / meanSize
	w := generate(p)
	out := make([]float64, len(w.reqs))
	for i, r := range w.reqs {
		out[i] = r.at
	}
	return out
}

// ObjectOf returns which of n objects `tessera bench` reads with GET i:
// a fixed stride through them, so every object is read equally often.
func ObjectOf(i, n int) int { return i * 7919 % n }
