package ring

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"tessera/meta"
)

// Errors callers branch on.
var (
	// ErrNotEnoughPeers reports a placement asking for more distinct peers
	// than the ring has peers with tokens.
	ErrNotEnoughPeers = errors.New("ring: not enough peers")
	// ErrInvalidPeer reports a peer list New cannot build a ring from.
	ErrInvalidPeer = errors.New("ring: invalid peer")
)

// DefaultVnodesPerWeight gives a weight-1 peer 64 tokens: enough that
// shares stay within roughly ±15% of proportional for small clusters
// (seed 004 suggests 32 or more), few enough that building a ring is cheap.
const DefaultVnodesPerWeight = 64

// Peer is one storage peer as the ring sees it.
type Peer struct {
	ID meta.PeerID
	// Weight is relative capacity; only ratios between peers matter.
	// Weight 0 keeps the peer listed but gives it no tokens.
	Weight float64
	// Zone is a failure domain; Placement spreads a key over distinct
	// zones before it reuses one. Empty means the peer is its own zone.
	Zone string
	// Vnodes, when positive, overrides the count derived from Weight.
	// Capacity balancing sets it so counts change only by deliberate,
	// bounded steps rather than with every weight fluctuation.
	Vnodes int
}

// Config tunes ring construction. The zero value uses the defaults.
type Config struct {
	// VnodesPerWeight is the token count of a weight-1 peer.
	VnodesPerWeight int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{VnodesPerWeight: DefaultVnodesPerWeight} }

// Ring is an immutable consistent-hash ring. Safe for concurrent use.
type Ring struct {
	peers  []Peer // sorted by ID; Vnodes holds the resolved count
	index  map[meta.PeerID]int
	tokens []token // sorted by (pos, peer)
	active int     // peers with at least one token
	zones  int     // distinct zones among active peers
}

// token is one virtual node: a position on the circle and its owner's
// index in Ring.peers.
type token struct {
	pos  uint64
	peer int
}

// New builds the ring of peers. The input order does not matter. Peer IDs
// must be non-empty and unique, weights finite and non-negative.
func New(peers []Peer, cfg Config) (*Ring, error) {
	if cfg.VnodesPerWeight <= 0 {
		cfg.VnodesPerWeight = DefaultVnodesPerWeight
	}
	sorted := slices.Clone(peers)
	slices.SortFunc(sorted, func(a, b Peer) int { return strings.Compare(string(a.ID), string(b.ID)) })
	r := &Ring{peers: sorted, index: make(map[meta.PeerID]int, len(sorted))}
	zones := make(map[string]bool)
	for i := range sorted {
		p := &sorted[i]
		if err := validate(*p); err != nil {
			return nil, err
		}
		if _, dup := r.index[p.ID]; dup {
			return nil, fmt.Errorf("%w: duplicate id %q", ErrInvalidPeer, p.ID)
		}
		r.index[p.ID] = i
		p.Vnodes = vnodeCount(*p, cfg.VnodesPerWeight)
		if p.Vnodes > 0 {
			r.active++
			zones[zoneKey(*p)] = true
		}
	}
	r.zones = len(zones)
	r.tokens = buildTokens(sorted)
	return r, nil
}

func validate(p Peer) error {
	switch {
	case p.ID == "":
		return fmt.Errorf("%w: empty id", ErrInvalidPeer)
	case math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) || p.Weight < 0:
		return fmt.Errorf("%w: peer %q weight %v", ErrInvalidPeer, p.ID, p.Weight)
	case p.Vnodes < 0:
		return fmt.Errorf("%w: peer %q vnodes %d", ErrInvalidPeer, p.ID, p.Vnodes)
	}
	return nil
}

// vnodeCount resolves a peer's token count. A positive weight always gets
// at least one token so that a tiny peer is still reachable.
func vnodeCount(p Peer, perWeight int) int {
	if p.Vnodes > 0 {
		return p.Vnodes
	}
	if p.Weight == 0 {
		return 0
	}
	return max(1, int(math.Round(p.Weight*float64(perWeight))))
}

// zoneKey gives zoneless peers a zone of their own, so that without zones
// placement is plain "n distinct peers".
func zoneKey(p Peer) string {
	if p.Zone == "" {
		return "\x00" + string(p.ID)
	}
	return p.Zone
}

// Peers returns every peer, sorted by ID, with Vnodes set to the resolved
// token count.
func (r *Ring) Peers() []Peer { return slices.Clone(r.peers) }

// Len returns the number of peers, including those without tokens.
func (r *Ring) Len() int { return len(r.peers) }

// Vnodes returns the token count of a peer, 0 if unknown.
func (r *Ring) Vnodes(id meta.PeerID) int {
	i, ok := r.index[id]
	if !ok {
		return 0
	}
	return r.peers[i].Vnodes
}

// Share returns the fraction of the hash circle a peer owns as the first
// choice of a key, 0 if unknown or tokenless.
func (r *Ring) Share(id meta.PeerID) float64 {
	i, ok := r.index[id]
	if !ok || len(r.tokens) == 0 {
		return 0
	}
	if r.active == 1 && r.peers[i].Vnodes > 0 {
		return 1 // its tokens own every arc; the sum below would wrap to 0
	}
	var owned float64
	for t, tok := range r.tokens {
		if tok.peer != i {
			continue
		}
		// A key hashing to h belongs to the first token with pos >= h, so a
		// token owns the arc (previous token, pos]; uint64 wraps the circle.
		prev := r.tokens[(t+len(r.tokens)-1)%len(r.tokens)].pos
		owned += float64(tok.pos - prev)
	}
	return owned / math.Exp2(64)
}
