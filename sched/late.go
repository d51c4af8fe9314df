package sched

import (
	"container/heap"
	"math"
	"time"
)

// fcfsPolicy is FCFS-R: a free slot goes to the oldest read with a shard
// not yet requested, from a random holder; a read may hold up to n slots
// and the rest are cancelled at its k-th chunk.
type fcfsPolicy struct{}

func (fcfsPolicy) name() string                           { return "fcfs-r" }
func (fcfsPolicy) key(_ *Dispatcher, r *reqState) float64 { return float64(r.seq) }
func (fcfsPolicy) redundant() bool                        { return true }
func (fcfsPolicy) choose(d *Dispatcher, r *reqState, _ time.Duration) int {
	return randomIdle(d, r)
}

// serptPolicy is SERPT-R (non-preemptive): a free slot goes to the read
// with the fewest bytes still missing, (k - done) x chunk, older first on
// ties, redundantly like FCFS-R.
type serptPolicy struct{}

func (serptPolicy) name() string { return "serpt-r" }
func (serptPolicy) key(_ *Dispatcher, r *reqState) float64 {
	return float64(r.K-r.done) * float64(r.ChunkBytes)
}
func (serptPolicy) redundant() bool { return true }
func (serptPolicy) choose(d *Dispatcher, r *reqState, _ time.Duration) int {
	return randomIdle(d, r)
}

func randomIdle(d *Dispatcher, r *reqState) int {
	n := 0
	pick := -1
	for s := range r.state {
		if r.idle(s) {
			n++
			if d.rng.IntN(n) == 0 {
				pick = s
			}
		}
	}
	return pick
}

// etaPolicy is the default. Late binding: a read waits in the pool's
// queue and each shard's peer is chosen when a slot frees, as the holder
// with the earliest predicted completion (setup + (gateways x in-flight
// bytes + chunk) / predicted rate, plus the decode a parity shard costs),
// skipping peers at PeerCap. Reads go
// shortest remaining bytes first, aged so that one second of waiting is
// worth Aging seconds of transfer at the fastest announced link rate
// (agingRate): weakly (0.03), because under bursts a strong aging turns
// the queue into FIFO across bursts and every small read then waits for
// the last burst's large ones. Exactly k fetches per read, plus at most
// one budgeted hedge against a straggler. Every fetch carries its read's
// size as Priority for the peer.
type etaPolicy struct{}

func (*etaPolicy) name() string    { return "eta" }
func (*etaPolicy) redundant() bool { return false }
func (*etaPolicy) key(d *Dispatcher, r *reqState) float64 {
	remaining := float64(r.K-r.done-r.inflight) * float64(r.ChunkBytes)
	return remaining + d.cfg.Aging*d.agingRate()*r.arrival.Seconds()
}
func (*etaPolicy) choose(d *Dispatcher, r *reqState, now time.Duration) int {
	best, bc := -1, math.Inf(1)
	for s := range r.state {
		if !r.idle(s) {
			continue
		}
		p := d.peer(r.Peers[s])
		if p.inflightN >= d.cfg.PeerCap {
			continue
		}
		if c := d.predict(p, r.ChunkBytes, now) + d.decodeCost(r, s); c < bc {
			best, bc = s, c
		}
	}
	return best
}

// decodeCost is the predicted seconds the gateway spends rebuilding a
// data chunk when shard s of r, a parity shard, stands in for it: K
// chunks through the decoder. Data shards cost none. Where transfers are
// slow (a network) it only breaks near-ties in data shards' favour; where
// they cost next to nothing (the embedded server's peers) it keeps reads
// on data shards unless a data peer is clearly behind.
func (d *Dispatcher) decodeCost(r *reqState, s int) float64 {
	if s < r.K {
		return 0
	}
	return float64(r.K) * float64(r.ChunkBytes) / d.cfg.DecodeRate
}

// eligible reports whether r may take one more regular fetch.
func (d *Dispatcher) eligible(p latePolicy, r *reqState) bool {
	if !p.redundant() && r.done+r.inflight >= r.K {
		return false
	}
	for s := range r.state {
		if r.idle(s) {
			return true
		}
	}
	return false
}

// maxBlocked bounds how many reads one Dispatch passes over because all
// their holders are at PeerCap, keeping a call cheap when every peer is.
const maxBlocked = 64

func (d *Dispatcher) dispatchLate(now time.Duration, p latePolicy) {
	var aside []*reqState
	for d.busy < d.cfg.Slots && len(d.heap) > 0 && len(aside) < maxBlocked {
		r := d.heap[0]
		if !d.eligible(p, r) {
			d.heapRemove(r)
			continue
		}
		s := p.choose(d, r, now)
		if s < 0 {
			d.heapRemove(r)
			aside = append(aside, r)
			continue
		}
		d.start(now, r, s, false)
		if d.eligible(p, r) {
			r.key = p.key(d, r)
			heap.Fix(&d.heap, r.heapIdx)
		} else {
			d.heapRemove(r)
		}
	}
	for _, r := range aside {
		d.heapPush(r)
	}
	if _, ok := p.(*etaPolicy); ok {
		d.hedgeNow(now)
	}
}

// heapPush adds r with a fresh key.
func (d *Dispatcher) heapPush(r *reqState) {
	if lp, ok := d.pol.(latePolicy); ok {
		r.key = lp.key(d, r)
	}
	heap.Push(&d.heap, r)
}

func (d *Dispatcher) heapRemove(r *reqState) {
	heap.Remove(&d.heap, r.heapIdx)
}

// rekey refreshes r's place after a chunk completes or fails.
func (d *Dispatcher) rekey(r *reqState) {
	lp, ok := d.pol.(latePolicy)
	if !ok {
		return
	}
	if r.heapIdx >= 0 {
		r.key = lp.key(d, r)
		heap.Fix(&d.heap, r.heapIdx)
	} else if d.eligible(lp, r) {
		d.heapPush(r)
	}
}

// reqHeap orders reads by key, then by arrival.
type reqHeap []*reqState

func (h reqHeap) Len() int { return len(h) }
func (h reqHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].seq < h[j].seq
}
func (h reqHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *reqHeap) Push(x any) {
	r := x.(*reqState)
	r.heapIdx = len(*h)
	*h = append(*h, r)
}
func (h *reqHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapIdx = -1
	return r
}

// task is one planned fetch.
type task struct {
	r     *reqState
	shard int
}

// taskQueue is a FIFO with a front for retries.
type taskQueue struct {
	items []task
	head  int
}

func (q *taskQueue) push(t task) { q.items = append(q.items, t) }

func (q *taskQueue) pushFront(t task) {
	if q.head > 0 {
		q.head--
		q.items[q.head] = t
		return
	}
	q.items = append([]task{t}, q.items...)
}

func (q *taskQueue) pop() (task, bool) {
	if q.head >= len(q.items) {
		return task{}, false
	}
	t := q.items[q.head]
	q.items[q.head] = task{}
	q.head++
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
	return t, true
}

// Len returns the fetches waiting.
func (q *taskQueue) Len() int { return len(q.items) - q.head }
