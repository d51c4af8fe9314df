package web

import (
	"sync"
	"time"
)

// recorder keeps the last n samples of the figures the page charts, so a
// freshly opened page draws minutes of history at once. Safe for
// concurrent use.
type recorder struct {
	n        int
	interval time.Duration

	mu    sync.Mutex
	times []int64
	p50   []*float64
	p95   []*float64
	p99   []*float64
	nodes map[string]*NodeHistory
}

func newRecorder(n int, interval time.Duration) *recorder {
	return &recorder{n: n, interval: interval, nodes: map[string]*NodeHistory{}}
}

// add appends one sample taken from st, dropping the oldest beyond n.
// Nodes no longer reported are forgotten once all their samples aged out.
func (r *recorder) add(st Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = push(r.times, st.Time.UnixMilli(), r.n)
	r.p50 = push(r.p50, st.Scheduler.GetP50, r.n)
	r.p95 = push(r.p95, st.Scheduler.GetP95, r.n)
	r.p99 = push(r.p99, st.Scheduler.GetP99, r.n)
	seen := make(map[string]bool, len(st.Nodes))
	for _, nd := range st.Nodes {
		seen[nd.ID] = true
		h, ok := r.nodes[nd.ID]
		if !ok {
			// Pad so every slice lines up with times.
			h = &NodeHistory{Send: make([]*float64, len(r.times)-1), Recv: make([]*float64, len(r.times)-1)}
			r.nodes[nd.ID] = h
		}
		h.Send = push(h.Send, nd.ThroughputSend, r.n)
		h.Recv = push(h.Recv, nd.ThroughputRecv, r.n)
	}
	for id, h := range r.nodes {
		if seen[id] {
			continue
		}
		h.Send, h.Recv = push(h.Send, nil, r.n), push(h.Recv, nil, r.n)
		if allNil(h.Send) && allNil(h.Recv) {
			delete(r.nodes, id)
		}
	}
}

// snapshot copies the history out.
func (r *recorder) snapshot() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := &History{
		Interval: r.interval.Seconds(),
		Times:    append([]int64(nil), r.times...),
		GetP50:   append([]*float64(nil), r.p50...),
		GetP95:   append([]*float64(nil), r.p95...),
		GetP99:   append([]*float64(nil), r.p99...),
		Nodes:    make(map[string]NodeHistory, len(r.nodes)),
	}
	for id, nh := range r.nodes {
		h.Nodes[id] = NodeHistory{Send: append([]*float64(nil), nh.Send...), Recv: append([]*float64(nil), nh.Recv...)}
	}
	return h
}

func push[T any](s []T, v T, n int) []T {
	s = append(s, v)
	if len(s) > n {
		// Copy down rather than reslice so the backing array stays bounded.
		copy(s, s[len(s)-n:])
		s = s[:n]
	}
	return s
}

func allNil(s []*float64) bool {
	for _, v := range s {
		if v != nil {
			return false
		}
	}
	return true
}
