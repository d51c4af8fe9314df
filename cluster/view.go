package cluster

import (
	"fmt"
	"strings"
	"sync"

	"tessera/cluster/ring"
	"tessera/meta"
)

// Membership is what a View reads; Node implements it.
type Membership interface {
	// Peers returns the members with role peer, any state, sorted by ID.
	Peers() []Member
	Member(id string) (Member, bool)
}

// ViewConfig tunes a View.
type ViewConfig struct {
	Ring ring.Config
}

// View is the ring of the peers a Membership knows. Every peer ever seen
// is on it with weight 1, dead or alive: liveness decides how reads go,
// not where data lives. The ring is rebuilt only when the set of peer IDs
// or zones changes, so gossiped free bytes never move data. Safe for
// concurrent use.
type View struct {
	src Membership
	cfg ViewConfig

	mu   sync.Mutex
	sig  string // peer IDs and zones the cached ring was built from
	ring *ring.Ring
}

// NewView returns a View over src.
func NewView(src Membership, cfg ViewConfig) *View {
	return &View{src: src, cfg: cfg}
}

// Ring returns the current ring, rebuilt if the peer set changed since the
// last call. The returned ring is immutable.
func (v *View) Ring() *ring.Ring {
	members := v.src.Peers()
	sig := signature(members)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ring != nil && sig == v.sig {
		return v.ring
	}
	v.sig, v.ring = sig, buildRing(members, v.cfg.Ring)
	return v.ring
}

// buildRing puts members on a ring. Members are keyed by unique ID and
// weights are constant, so once empty IDs (which no well-behaved node
// sends) are skipped, ring.New has nothing left to reject; the fallback
// only guards against a future validation rule.
func buildRing(members []Member, cfg ring.Config) *ring.Ring {
	peers := make([]ring.Peer, 0, len(members))
	for _, m := range members {
		if m.ID != "" {
			peers = append(peers, ring.Peer{ID: meta.PeerID(m.ID), Weight: 1, Zone: m.Zone})
		}
	}
	r, err := ring.New(peers, cfg)
	if err != nil {
		r, _ = ring.New(nil, cfg)
	}
	return r
}

// signature identifies what the ring depends on. Members arrive sorted.
func signature(members []Member) string {
	var b strings.Builder
	for _, m := range members {
		b.WriteString(m.ID)
		b.WriteByte(0)
		b.WriteString(m.Zone)
		b.WriteByte(0)
	}
	return b.String()
}

// Placement returns n distinct peers for bucket/key, in shard order.
func (v *View) Placement(bucket, key string, n int) ([]meta.PeerID, error) {
	p, err := v.Ring().Placement(bucket+"/"+key, n)
	if err != nil {
		return nil, fmt.Errorf("place %s/%s: %w", bucket, key, err)
	}
	return p, nil
}

// Peers returns every peer on the ring, alive or not, sorted by ID.
func (v *View) Peers() []meta.PeerID {
	rp := v.Ring().Peers()
	out := make([]meta.PeerID, len(rp))
	for i, p := range rp {
		out[i] = p.ID
	}
	return out
}

// Member returns what is known about a peer.
func (v *View) Member(id meta.PeerID) (Member, bool) { return v.src.Member(string(id)) }
