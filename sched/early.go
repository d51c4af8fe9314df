package sched

import (
	"cmp"
	"container/heap"
	"slices"
	"time"
)

// randomPolicy fetches k shards chosen uniformly at random, in arrival
// order: the baseline.
type randomPolicy struct{}

func (randomPolicy) name() string { return "random" }

func (randomPolicy) plan(d *Dispatcher, batch []*reqState, _ time.Duration) {
	for _, r := range batch {
		idle := make([]int, 0, len(r.state))
		for s := range r.state {
			if r.idle(s) {
				idle = append(idle, s)
			}
		}
		d.rng.Shuffle(len(idle), func(i, j int) { idle[i], idle[j] = idle[j], idle[i] })
		for _, s := range idle[:min(r.K, len(idle))] {
			d.assign(r, s)
		}
	}
}

// greedyPolicy is seed 000's Algorithm 1: the k peers with the lowest
// gossiped throughput_send, ties to the lower shard index.
type greedyPolicy struct{}

func (greedyPolicy) name() string { return "greedy" }

func (greedyPolicy) plan(d *Dispatcher, batch []*reqState, _ time.Duration) {
	for _, r := range batch {
		for _, s := range pickK(r, r.K, func(s int) float64 {
			tps, _ := d.gossip(r.Peers[s])
			return tps
		}) {
			d.assign(r, s)
		}
	}
}

// wlcPolicy is seed 003's weighted least connections: each shard goes to
// the holder with the fewest connections (this gateway's fetches queued
// or in flight) per unit of weight. With cpu, the load is scaled by
// 1+CPU utilisation from gossip, and every Period a peer whose load stayed
// more than half above (below) the mean for three rounds in a row has its
// weight cut by a fifth (raised by a quarter, up to 4x its base).
type wlcPolicy struct {
	cpu  bool
	last time.Duration
}

func (w *wlcPolicy) name() string {
	if w.cpu {
		return "wlc-cpu"
	}
	return "wlc"
}

func (w *wlcPolicy) load(d *Dispatcher, p *peerState, extra int) float64 {
	l := float64(p.assigned+p.inflightN+extra) / p.weight
	if w.cpu {
		_, cpu := d.gossip(p.id)
		l *= 1 + cpu
	}
	return l
}

func (w *wlcPolicy) plan(d *Dispatcher, batch []*reqState, _ time.Duration) {
	for _, r := range batch {
		for _, s := range pickK(r, r.K, func(s int) float64 {
			return w.load(d, d.peer(r.Peers[s]), 1)
		}) {
			d.assign(r, s)
		}
	}
}

// unbalancedRounds is how many failed balancing rounds trigger a
// re-weighting (seed 003).
const unbalancedRounds = 3

// round runs wlc-cpu's periodic re-weighting.
func (w *wlcPolicy) round(d *Dispatcher, now time.Duration) {
	if !w.cpu || now-w.last < d.cfg.Period || len(d.peers) == 0 {
		return
	}
	w.last = now
	var mean float64
	for _, p := range d.peers {
		mean += w.load(d, p, 0)
	}
	mean /= float64(len(d.peers))
	if mean <= 0 {
		return
	}
	for _, p := range d.peers {
		l := w.load(d, p, 0)
		switch {
		case l > 1.5*mean:
			p.hot, p.cold = p.hot+1, 0
		case l < 0.5*mean:
			p.hot, p.cold = 0, p.cold+1
		default:
			p.hot, p.cold = 0, 0
		}
		if p.hot >= unbalancedRounds {
			p.weight = max(p.weight*0.8, p.baseWeight/4)
			p.hot = 0
		}
		if p.cold >= unbalancedRounds {
			p.weight = min(p.weight*1.25, p.baseWeight*4)
			p.cold = 0
		}
	}
}

// loadPolicy is seed 000's LOAD-ALGORITHM over the batch of reads that
// waited for the pool: charge every peer its gossiped throughput_send
// plus every chunk of every read in the batch, then repeatedly take the
// most loaded peer and drop from it the largest chunk whose read still
// has more than k chunks, until every read has exactly k. The surviving
// chunks join the FIFO of fetch tasks in read order.
type loadPolicy struct{}

func (*loadPolicy) name() string { return "load" }

func (*loadPolicy) plan(d *Dispatcher, batch []*reqState, _ time.Duration) {
	for _, c := range LoadAlgorithm(loadInput(d, batch)) {
		d.assign(batch[c.File], c.Shard)
	}
}

func loadInput(d *Dispatcher, batch []*reqState) LoadBatch {
	lb := LoadBatch{Load: map[string]float64{}}
	for _, r := range batch {
		f := LoadFile{K: r.K, Size: float64(r.ChunkBytes)}
		for s := range r.state {
			if r.idle(s) {
				f.Chunks = append(f.Chunks, LoadChunk{Shard: s, Peer: string(r.Peers[s])})
				if _, ok := lb.Load[string(r.Peers[s])]; !ok {
					tps, _ := d.gossip(r.Peers[s])
					lb.Load[string(r.Peers[s])] = tps
				}
			}
		}
		lb.Files = append(lb.Files, f)
	}
	return lb
}

// LoadBatch is LOAD-ALGORITHM's input: files with their candidate chunks
// and each peer's starting load (its throughput_send).
type LoadBatch struct {
	Files []LoadFile
	Load  map[string]float64
}

// LoadFile is one read: K of its chunks (Size bytes each) are needed.
type LoadFile struct {
	K      int
	Size   float64
	Chunks []LoadChunk
}

// LoadChunk is one chunk of a file and the peer holding it.
type LoadChunk struct {
	Shard int
	Peer  string
}

// LoadPick is one chunk LOAD-ALGORITHM keeps.
type LoadPick struct{ File, Shard int }

// LoadAlgorithm runs Algorithm 2 of seed 000 and returns the chunks kept,
// file by file in shard order. Ties: the most loaded peer with the lower
// name, the largest chunk of the earlier file. A peer whose chunks all
// belong to files already down to k is passed over for the next most
// loaded. Files with fewer than K chunks keep them all.
func LoadAlgorithm(b LoadBatch) []LoadPick {
	left := make([]int, len(b.Files))
	kept := make([][]bool, len(b.Files))
	byPeer := map[string]*loadPeer{}
	for p, l := range b.Load {
		byPeer[p] = &loadPeer{name: p, load: l}
	}
	for i, f := range b.Files {
		left[i] = len(f.Chunks)
		kept[i] = make([]bool, len(f.Chunks))
		for j, c := range f.Chunks {
			kept[i][j] = true
			lp, ok := byPeer[c.Peer]
			if !ok {
				lp = &loadPeer{name: c.Peer}
				byPeer[c.Peer] = lp
			}
			lp.load += f.Size
			lp.chunks = append(lp.chunks, LoadPick{File: i, Shard: j})
		}
	}
	h := make(loadHeap, 0, len(byPeer))
	for _, lp := range byPeer {
		// largest first; the earlier file first among equals
		slices.SortStableFunc(lp.chunks, func(a, b2 LoadPick) int {
			return cmp.Compare(b.Files[b2.File].Size, b.Files[a.File].Size)
		})
		h = append(h, lp)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		lp := h[0]
		// Chunks passed over stay unremovable: kept only turns false and
		// files only lose chunks.
		for lp.head < len(lp.chunks) {
			c := lp.chunks[lp.head]
			if kept[c.File][c.Shard] && left[c.File] > b.Files[c.File].K {
				break
			}
			lp.head++
		}
		if lp.head == len(lp.chunks) {
			heap.Pop(&h)
			continue
		}
		c := lp.chunks[lp.head]
		lp.head++
		kept[c.File][c.Shard] = false
		left[c.File]--
		lp.load -= b.Files[c.File].Size
		heap.Fix(&h, 0)
	}
	var out []LoadPick
	for i, f := range b.Files {
		for j, c := range f.Chunks {
			if kept[i][j] {
				out = append(out, LoadPick{File: i, Shard: c.Shard})
			}
		}
	}
	return out
}

type loadPeer struct {
	name   string
	load   float64
	chunks []LoadPick // File and index into its Chunks, largest first
	head   int
}

// loadHeap is a max-heap on load, the lower name first among equals.
type loadHeap []*loadPeer

func (h loadHeap) Len() int { return len(h) }
func (h loadHeap) Less(i, j int) bool {
	if h[i].load != h[j].load {
		return h[i].load > h[j].load
	}
	return h[i].name < h[j].name
}
func (h loadHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *loadHeap) Push(x any)   { *h = append(*h, x.(*loadPeer)) }
func (h *loadHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
