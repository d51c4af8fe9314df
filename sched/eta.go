package sched

import "tessera/meta"

// ETAConfig tunes the ETA policy. Zero fields take defaults.
type ETAConfig struct {
	// ParityPenalty inflates a parity shard's predicted time by this
	// fraction, so a data shard keeps its place unless its peer is
	// clearly slower: reading parity costs a Reed-Solomon reconstruction,
	// and data shards can be streamed straight through. Default 0.25.
	ParityPenalty float64
}

// ETA orders shards by predicted completion time,
// (in-flight bytes + shard bytes) / throughput, using the Tracker's view
// of each peer, with parity shards' times inflated by ParityPenalty.
//
// A read finishes when the slowest of its first k fetches does, so ETA
// first finds the best achievable makespan T (greedy: the k cheapest
// shards), then fills the first k with the lowest shard indexes whose
// predicted time is within T. Data shards thus keep their places unless
// their peer is the bottleneck, and a fast parity peer does not displace
// an idle data shard for no gain. The rest follow cheapest first. Each
// choice adds the shard's bytes to its peer's load for the rest of the
// call, so a peer holding several shards is not costed as idle for all
// of them. Shards on peers that failed within the tracker's FailHold come
// after every healthy one.
type ETA struct {
	t             *Tracker
	parityPenalty float64
}

// NewETA returns the ETA policy reading t; a nil t tracks nothing, which
// yields data shards first.
func NewETA(t *Tracker, cfg ETAConfig) *ETA {
	if cfg.ParityPenalty <= 0 {
		cfg.ParityPenalty = 0.25
	}
	if t == nil {
		t = NewTracker(TrackerConfig{})
	}
	return &ETA{t: t, parityPenalty: cfg.ParityPenalty}
}

// Name implements Policy.
func (*ETA) Name() string { return "eta" }

// Order implements Policy.
func (e *ETA) Order(peers []meta.PeerID, k int, shardBytes int64) []int {
	c := &costing{
		peers:   peers,
		views:   e.t.views(peers),
		k:       k,
		size:    float64(max(shardBytes, 1)),
		penalty: e.parityPenalty,
	}
	var healthy, failed []int
	for i, v := range c.views {
		if v.failed {
			failed = append(failed, i)
		} else {
			healthy = append(healthy, i)
		}
	}
	makespan := c.makespan(healthy)
	c.added = make(map[meta.PeerID]float64, len(peers))
	out := make([]int, 0, len(peers))
	for len(out) < k && len(healthy) > 0 {
		j := c.lowestWithin(healthy, makespan)
		out = append(out, c.take(&healthy, j))
	}
	for _, group := range [][]int{healthy, failed} {
		for len(group) > 0 {
			out = append(out, c.take(&group, c.cheapest(group)))
		}
	}
	return out
}

// costing holds one Order call's inputs and the load it has assigned.
type costing struct {
	peers   []meta.PeerID
	views   []view
	k       int
	size    float64
	penalty float64
	added   map[meta.PeerID]float64 // bytes assigned to each peer so far
}

func (c *costing) cost(i int) float64 {
	t := (c.views[i].inFlight + c.added[c.peers[i]] + c.size) / c.views[i].throughput
	if i >= c.k {
		t *= 1 + c.penalty
	}
	return t
}

// take removes group[j], charges its peer and returns the shard index.
func (c *costing) take(group *[]int, j int) int {
	i := (*group)[j]
	c.added[c.peers[i]] += c.size
	*group = append((*group)[:j], (*group)[j+1:]...)
	return i
}

// makespan is the latest predicted finish among the k shards a greedy
// cheapest-first choice would fetch.
func (c *costing) makespan(healthy []int) float64 {
	c.added = make(map[meta.PeerID]float64, len(c.peers))
	group := append([]int(nil), healthy...)
	var worst float64
	for n := 0; n < c.k && len(group) > 0; n++ {
		j := c.cheapest(group)
		worst = max(worst, c.cost(group[j]))
		c.take(&group, j)
	}
	return worst
}

// lowestWithin returns the position of the lowest shard index predicted
// to finish by limit, or of the cheapest shard if none is.
func (c *costing) lowestWithin(group []int, limit float64) int {
	for j, i := range group {
		if c.cost(i) <= limit {
			return j
		}
	}
	return c.cheapest(group)
}

// cheapest returns the position in group of the lowest cost, the first on
// ties; group is in index order, so ties go to the lower shard index.
func (c *costing) cheapest(group []int) int {
	best, bestCost := 0, c.cost(group[0])
	for j := 1; j < len(group); j++ {
		if t := c.cost(group[j]); t < bestCost {
			best, bestCost = j, t
		}
	}
	return best
}
