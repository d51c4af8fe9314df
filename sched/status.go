package sched

import (
	"slices"
	"sort"
	"time"

	"tessera/meta"
)

// latWindow is how many recent read latencies Status summarises.
const latWindow = 1024

type counters struct {
	fetches, hedges, finished, failed uint64
	bytes                             int64
	lat                               []time.Duration
	next                              int
}

func (c *counters) init() { c.lat = make([]time.Duration, 0, latWindow) }

func (c *counters) latency(d time.Duration) {
	c.finished++
	if len(c.lat) < latWindow {
		c.lat = append(c.lat, d)
		return
	}
	c.lat[c.next] = d
	c.next = (c.next + 1) % latWindow
}

// Status is a snapshot of a Dispatcher for status pages.
type Status struct {
	Policy   string
	Slots    int // pool size, L
	InUse    int // slots busy
	Queued   int // reads waiting or in progress
	Fetches  uint64
	Hedges   uint64
	Finished uint64
	Failed   uint64
	// Latency quantiles over the last reads (up to 1024), queueing included.
	P50, P95, P99 time.Duration
	Peers         []PeerStatus // sorted by ID
}

// PeerStatus is one peer as this gateway's scheduler sees it.
type PeerStatus struct {
	ID       meta.PeerID
	InFlight int
	Bytes    int64   // in flight
	Goodput  float64 // measured bytes/s, 0 if never measured
	Chosen   uint64  // fetches started
	Skipped  uint64  // finished reads that held a shard here and did not use it
	Failures uint64
}

// Status returns a snapshot.
func (d *Dispatcher) Status() Status {
	st := Status{Policy: d.pol.name(), Slots: d.cfg.Slots, InUse: d.busy, Queued: len(d.reqs),
		Fetches: d.stats.fetches, Hedges: d.stats.hedges, Finished: d.stats.finished, Failed: d.stats.failed}
	if n := len(d.stats.lat); n > 0 {
		s := slices.Clone(d.stats.lat)
		slices.Sort(s)
		st.P50, st.P95, st.P99 = s[n*50/100], s[n*95/100], s[min(n*99/100, n-1)]
	}
	for _, p := range d.peers {
		st.Peers = append(st.Peers, PeerStatus{ID: p.id, InFlight: p.inflightN, Bytes: p.inflightB,
			Goodput: p.bw, Chosen: p.chosen, Skipped: p.skipped, Failures: p.failures})
	}
	sort.Slice(st.Peers, func(i, j int) bool { return st.Peers[i].ID < st.Peers[j].ID })
	return st
}

// Hedges returns how many hedge fetches were started.
func (d *Dispatcher) Hedges() uint64 { return d.stats.hedges }
