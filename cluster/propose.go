package cluster

import (
	"math"
	"math/rand/v2"
	"time"

	"tessera/cluster/ring"
	"tessera/meta"
)

// DefaultProposeInterval is Config.ProposeInterval's default.
const DefaultProposeInterval = 2 * time.Second

// weightChange is how much a peer's capacity must move (relative) before
// its weight follows: capacity readings wobble, and every weight change
// is a new epoch that moves data.
const weightChange = 0.05

// proposer mints ring epochs. Only the alive peer with the lowest ID acts
// (every node applies the same rule to the same gossip, so normally one
// does; two racing give two records with one number, which every node
// orders the same way by hash). It waits until the peer set has been
// still for a whole interval, so a cluster starting up or a batch of
// peers joining yields one epoch, not one per peer.
type proposer struct {
	n        *Node
	interval time.Duration
	cfg      ring.BalanceConfig

	sig        string    // peer IDs last seen
	sigSince   time.Time // when they last changed
	lastMinted time.Time
}

func newProposer(n *Node) *proposer {
	iv := n.cfg.ProposeInterval
	if iv <= 0 {
		iv = DefaultProposeInterval
	}
	return &proposer{n: n, interval: iv, cfg: ring.BalanceConfig{Width: n.cfg.RingWidth}}
}

func (p *proposer) tick(now time.Time) {
	peers := p.n.Peers()
	if sig := signature(peers); sig != p.sig || !p.n.joined.Load() {
		// Not joined yet counts as the peer set still changing: gossip
		// has yet to bring the others.
		p.sig, p.sigSince = sig, now
	}
	if now.Sub(p.sigSince) < p.interval || now.Sub(p.lastMinted) < p.interval || !p.isProposer(peers) {
		return
	}
	cur, _ := p.n.Epoch()
	if cur.Manual {
		return // changes wait for Node.ApplyLayout
	}
	if _, due := desiredEpoch(cur, peers, p.cfg); !due || !p.syncState(now) {
		return
	}
	// The state exchange may have brought a switch to manual mode.
	if cur, _ = p.n.Epoch(); cur.Manual {
		return
	}
	next, ok := desiredEpoch(cur, p.n.Peers(), p.cfg)
	if !ok {
		return
	}
	if p.n.meta.epochs.adopt(next, p.n.cfg.NodeID) {
		p.lastMinted = now
	}
}

// syncBatch is how many other members the proposer exchanges full state
// with before it mints.
const syncBatch = 3

// syncState exchanges full state (a memberlist push/pull) with up to
// syncBatch other alive members, chosen at random, and reports whether the
// peer set is still what the stillness interval saw. Gossip broadcasts of
// new members are best-effort: on a loaded host a proposer missed three
// joins for 17 s and minted a layout of half the cluster, narrower than
// the code, while the gateway already knew every peer. A push/pull is a
// TCP exchange of every member, so whatever another member knows, the
// proposer knows before it mints; if that changes the peer set, the
// interval starts again.
func (p *proposer) syncState(now time.Time) bool {
	var addrs []string
	for _, m := range p.n.reg.list(nil) {
		if m.ID != p.n.cfg.NodeID && m.State == StateAlive && m.Addr != "" {
			addrs = append(addrs, m.Addr)
		}
	}
	if len(addrs) == 0 {
		return true
	}
	rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	if _, err := p.n.ml.Join(addrs[:min(len(addrs), syncBatch)]); err != nil {
		p.n.log.Debug().Err(err).Msg("state exchange before minting an epoch failed")
	}
	if sig := signature(p.n.Peers()); sig != p.sig {
		p.sig, p.sigSince = sig, now
		return false
	}
	return true
}

// isProposer reports whether the alive peer with the lowest ID is this
// node or one it hosts (a hosted peer has no loop of its own: its host
// proposes for it).
func (p *proposer) isProposer(peers []Member) bool {
	for _, m := range peers { // sorted by ID
		if m.State == StateAlive {
			return (m.ID == p.n.cfg.NodeID && p.n.cfg.Role == RolePeer) || p.n.hosts(m.ID)
		}
	}
	return false
}

// desiredEpoch is the layout the peers call for: every peer of cur (none
// is ever dropped implicitly) and every peer seen, weighted by capacity,
// token counts balanced from cur's. ok is false when that is cur's layout.
func desiredEpoch(cur Epoch, members []Member, cfg ring.BalanceConfig) (Epoch, bool) {
	prev := map[string]EpochPeer{}
	for _, p := range cur.Peers {
		prev[p.ID] = p
	}
	var in []ring.Peer
	seen := map[string]bool{}
	for _, m := range members {
		if m.Role != RolePeer || m.ID == "" {
			continue
		}
		seen[m.ID] = true
		old, ok := prev[m.ID]
		if m.Draining && drained(m, old, ok) {
			continue // empty under a layout that gave it nothing: off the ring
		}
		w := capacityWeight(m.Capacity)
		if ok && old.Weight > 0 && math.Abs(w-old.Weight)/old.Weight < weightChange {
			w = old.Weight
		}
		if m.Draining {
			w = 0
		}
		in = append(in, ring.Peer{ID: meta.PeerID(m.ID), Weight: w, Zone: m.Zone, Vnodes: old.Vnodes})
	}
	for _, p := range cur.Peers {
		if !seen[p.ID] {
			in = append(in, ring.Peer{ID: meta.PeerID(p.ID), Weight: p.Weight, Zone: p.Zone, Vnodes: p.Vnodes})
		}
	}
	if len(in) == 0 {
		return Epoch{}, false
	}
	next := Epoch{Number: cur.Number + 1, Manual: cur.Manual}
	for _, p := range ring.Balance(in, cfg) {
		next.Peers = append(next.Peers, EpochPeer{ID: string(p.ID), Weight: p.Weight, Zone: p.Zone, Vnodes: p.Vnodes})
	}
	if cur.Number > 0 && next.sameLayout(cur) {
		return Epoch{}, false
	}
	return next, true
}

// capacityWeight is a peer's weight: its capacity in GiB to three
// significant digits (only ratios matter); unknown capacity counts as 1.
func capacityWeight(capacity uint64) float64 {
	if capacity == 0 {
		return 1
	}
	g := float64(capacity) / (1 << 30)
	scale := math.Pow(10, 2-math.Floor(math.Log10(g)))
	return math.Round(g*scale) / scale
}

// drained reports whether a draining peer can leave the ring: the current
// epoch already gives it no tokens (so nothing new lands on it) and it
// reports holding no objects.
func drained(m Member, cur EpochPeer, onRing bool) bool {
	return (!onRing || cur.Vnodes == 0) && !m.StatsAt.IsZero() && m.Stats.Objects == 0
}
