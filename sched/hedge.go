package sched

import (
	"container/heap"
	"slices"
	"time"
)

// Hedging: a fetch that has run longer than the p95 of observed
// actual/predicted slowdowns gets one k+1-th fetch from the best unused
// holder, if a slot is free and the budget allows; the first k to finish
// win and the rest are cancelled.
const (
	ratioWindow  = 256 // slowdown samples kept
	ratioRefresh = 32  // samples between p95 recomputations
	initialRatio = 3.0 // threshold before enough samples
	minRatio     = 1.5 // never hedge a fetch merely on time
	maxTokens    = 3.0
)

// hedger holds the hedge budget and the slowdown threshold.
type hedger struct {
	rate    float64 // tokens earned per finished read; <0 disables
	tokens  float64
	ratios  []float64
	next    int
	fresh   int
	thresh  float64
	scratch []float64
}

func (h *hedger) init(rate float64) {
	h.rate = rate
	h.tokens = 1
	h.thresh = initialRatio
	h.ratios = make([]float64, 0, ratioWindow)
}

func (h *hedger) enabled() bool { return h.rate > 0 && h.tokens >= 1 }

func (h *hedger) earn() {
	if h.rate > 0 {
		h.tokens = min(h.tokens+h.rate, maxTokens)
	}
}

// observe records a completed fetch's actual/predicted ratio.
func (h *hedger) observe(took time.Duration, pred float64) {
	if pred <= 0 {
		return
	}
	x := took.Seconds() / pred
	if len(h.ratios) < ratioWindow {
		h.ratios = append(h.ratios, x)
	} else {
		h.ratios[h.next] = x
		h.next = (h.next + 1) % ratioWindow
	}
	h.fresh++
	if h.fresh >= ratioRefresh && len(h.ratios) >= ratioRefresh {
		h.fresh = 0
		h.scratch = append(h.scratch[:0], h.ratios...)
		slices.Sort(h.scratch)
		h.thresh = max(h.scratch[len(h.scratch)*95/100], minRatio)
	}
}

// hedgeEntry is a fetch that may need a hedge at due.
type hedgeEntry struct {
	due   time.Duration
	r     *reqState
	shard int
	start time.Duration
}

type hedgeHeap []hedgeEntry

func (h hedgeHeap) Len() int           { return len(h) }
func (h hedgeHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h hedgeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hedgeHeap) Push(x any)        { *h = append(*h, x.(hedgeEntry)) }
func (h *hedgeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// watch registers a regular fetch just started for hedging. The due time
// uses the threshold in force now; a later change of threshold applies
// to later fetches.
func (d *Dispatcher) watch(r *reqState, s int) {
	if d.hedge.rate <= 0 {
		return
	}
	f := r.fetches[s]
	due := f.start + time.Duration(d.hedge.thresh*f.pred*float64(time.Second))
	heap.Push(&d.hedges, hedgeEntry{due: due, r: r, shard: s, start: f.start})
}

// live reports whether e still names a fetch in flight whose read could
// take a hedge.
func (d *Dispatcher) live(e hedgeEntry) bool {
	r := e.r
	if d.reqs[r.ID] != r || r.state[e.shard] != shFlight || r.fetches[e.shard].start != e.start {
		return false
	}
	if r.hedged || r.done+r.inflight != r.K {
		return !r.hedged && r.done+r.inflight < r.K // not yet all issued: may still qualify
	}
	for s := range r.state {
		if r.idle(s) {
			return true
		}
	}
	return false
}

// ready reports whether e's read may take its hedge now.
func ready(e hedgeEntry) bool { return e.r.done+e.r.inflight == e.r.K }

// hedgeDue returns the earliest time a hedge may fire.
func (d *Dispatcher) hedgeDue(now time.Duration) (time.Duration, bool) {
	if !d.hedge.enabled() {
		return 0, false
	}
	for len(d.hedges) > 0 {
		e := d.hedges[0]
		if !d.live(e) {
			heap.Pop(&d.hedges)
			continue
		}
		return max(e.due, now), true
	}
	return 0, false
}

// hedgeNow starts the hedges that are due, while slots and budget last.
// Entries due whose read still has regular fetches to issue wait for a
// later call.
func (d *Dispatcher) hedgeNow(now time.Duration) {
	p := &etaPolicy{}
	var later []hedgeEntry
	for len(d.hedges) > 0 && d.busy < d.cfg.Slots && d.hedge.enabled() {
		e := d.hedges[0]
		if e.due > now {
			break
		}
		heap.Pop(&d.hedges)
		if !d.live(e) {
			continue
		}
		if !ready(e) {
			later = append(later, e)
			continue
		}
		s := p.choose(d, e.r, now)
		if s < 0 {
			later = append(later, e)
			continue
		}
		e.r.hedged = true
		d.hedge.tokens--
		d.start(now, e.r, s, true)
	}
	for _, e := range later {
		heap.Push(&d.hedges, e)
	}
}
