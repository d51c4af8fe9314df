package ring

import (
	"math"
	"slices"
	"strings"

	"tessera/meta"
)

// BalanceConfig tunes Balance (seed 004's capacity-aware vnode
// adjustment). The zero value uses the defaults.
type BalanceConfig struct {
	// VnodesPerPeer is the mean token count a new peer starts from (128).
	VnodesPerPeer int
	// K is the tolerance: a peer acts only when its utilisation P = s/w
	// leaves [1-K, 1+K] around the mean, which is 1 (0.08). A larger K
	// balances worse; a smaller one makes counts chase noise.
	K float64
	// Rounds caps the single-peer adjustment steps of one call (1000).
	Rounds int
	// Width is the number of distinct peers each key is placed on (the
	// code's data+parity shards). Above 1, Balance evens out each peer's
	// expected share of stored shards (Ring.StoredShares) instead of its
	// first-choice share of the circle: with several shards per key those
	// differ, since a peer holds at most one shard of a key. The target is
	// then the weight fraction capped at 1/Width, the excess of capped
	// peers spread over the rest. 0 or 1 balances the first-choice share.
	Width int
}

func (c *BalanceConfig) fill() {
	if c.VnodesPerPeer <= 0 {
		c.VnodesPerPeer = 128
	}
	if c.K <= 0 {
		c.K = 0.08
	}
	if c.Rounds <= 0 {
		c.Rounds = 1000
	}
	if c.Width <= 0 {
		c.Width = 1
	}
}

// Balance assigns token counts so that each peer's share s of the circle
// follows its weight: with w its weight over the total, P = s/w, and a
// peer whose P leaves [1-K, 1+K] has its count scaled by 1/P (to aim at the
// middle of the band, so it does not sit on the edge), while peers inside
// the band keep theirs. That hysteresis is what makes counts settle: a
// balanced ring is a fixed point, so calling Balance on its own result
// changes nothing.
//
// Input Vnodes are the previous counts (0 for a new peer, which starts
// from its weight's share of VnodesPerPeer × peers). Weight-0 peers get no
// tokens. The result is a pure function of the input set (order does not
// matter), so every node computes the same counts. It is sorted by ID.
func Balance(peers []Peer, cfg BalanceConfig) []Peer {
	cfg.fill()
	out := slices.Clone(peers)
	slices.SortFunc(out, func(a, b Peer) int { return strings.Compare(string(a.ID), string(b.ID)) })
	var total float64
	active := 0
	for _, p := range out {
		if p.Weight > 0 && !math.IsInf(p.Weight, 0) {
			total += p.Weight
			active++
		}
	}
	for i := range out {
		p := &out[i]
		switch {
		case !(p.Weight > 0) || math.IsInf(p.Weight, 0):
			p.Vnodes = 0
		case p.Vnodes <= 0:
			p.Vnodes = max(1, int(math.Round(p.Weight/total*float64(active*cfg.VnodesPerPeer))))
		}
	}
	if active < 2 {
		return out
	}
	st := &balancer{k: cfg.K, total: total, width: cfg.Width, acting: map[meta.PeerID]bool{},
		frozen: map[meta.PeerID]bool{}, seen: map[meta.PeerID]map[int]float64{}}
	for range cfg.Rounds {
		if !st.step(out) {
			break
		}
	}
	return out
}

// balancer is the state of one Balance call.
type balancer struct {
	k, total float64
	width    int
	// acting peers left 1±K and act until back inside 1±K/2.
	acting map[meta.PeerID]bool
	// frozen peers hit a cycle: a single token's arc is wider than the
	// band, so the count flips between two values. They keep the visited
	// count closest to balance and are left alone for the rest of the call.
	frozen map[meta.PeerID]bool
	seen   map[meta.PeerID]map[int]float64 // count → |P-1| visited
}

// step finds the peer furthest from balance among those that must act and
// moves its count part of the way towards 1/P. It reports whether it
// changed anything. One peer per step, with damping, because every count
// change moves the others' shares too.
func (b *balancer) step(peers []Peer) bool {
	r, err := New(peers, Config{})
	if err != nil {
		return false
	}
	util := b.utilisation(r, peers)
	worst, worstDev, worstP := -1, 0.0, 0.0
	for i, p := range peers {
		if p.Vnodes == 0 || b.frozen[p.ID] {
			continue
		}
		P := util(i)
		dev := math.Abs(P - 1)
		b.visit(p.ID, p.Vnodes, dev)
		band := b.k
		if b.acting[p.ID] {
			band = b.k / 2
		}
		if dev <= band {
			delete(b.acting, p.ID)
			continue
		}
		if dev > worstDev {
			worst, worstDev, worstP = i, dev, P
		}
	}
	if worst < 0 {
		return false
	}
	p := &peers[worst]
	b.acting[p.ID] = true
	step := max(1, int(math.Abs(float64(p.Vnodes)/max(worstP, 0.25)-float64(p.Vnodes))/2))
	next := p.Vnodes + step
	if worstP > 1 {
		next = max(1, p.Vnodes-step)
	}
	if _, cycle := b.seen[p.ID][next]; cycle || next == p.Vnodes {
		p.Vnodes = b.best(p.ID)
		b.frozen[p.ID] = true
		return true
	}
	p.Vnodes = next
	return true
}

// utilisation returns P = share / target for peers[i] on r: the
// first-choice share over the weight fraction at width 1, else the stored
// fraction over its capped target. r's peers are peers (both sorted by ID).
func (b *balancer) utilisation(r *Ring, peers []Peer) func(i int) float64 {
	if b.width <= 1 {
		return func(i int) float64 { return r.Share(peers[i].ID) / (peers[i].Weight / b.total) }
	}
	stored := r.storedFractions(b.width)
	target := storedTargets(r.peers, min(b.width, r.active))
	return func(i int) float64 { return stored[i] / target[i] }
}

func (b *balancer) visit(id meta.PeerID, count int, dev float64) {
	if b.seen[id] == nil {
		b.seen[id] = map[int]float64{}
	}
	b.seen[id][count] = dev
}

// best is the visited count of id closest to balance; ties go to the
// smaller count, so the choice never depends on visiting order.
func (b *balancer) best(id meta.PeerID) int {
	bestC, bestDev := 0, math.Inf(1)
	for c, dev := range b.seen[id] {
		if dev < bestDev || (dev == bestDev && c < bestC) {
			bestC, bestDev = c, dev
		}
	}
	return bestC
}

// Utilisation returns each tokened peer's P = share / weight fraction, by
// ID (1 is perfectly balanced).
func (r *Ring) Utilisation() map[string]float64 {
	var total float64
	for _, p := range r.peers {
		if p.Vnodes > 0 {
			total += p.Weight
		}
	}
	out := map[string]float64{}
	for _, p := range r.peers {
		if p.Vnodes > 0 && p.Weight > 0 {
			out[string(p.ID)] = r.Share(p.ID) / (p.Weight / total)
		}
	}
	return out
}
