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
	// Epoch returns the adopted ring epoch and its predecessor; a zero
	// Number means none, and the ring is then built from membership.
	Epoch() (cur, prev Epoch)
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
	// prev is the ring of the previous epoch, kept while data may still
	// sit where it placed keys; prevSig names it.
	prev    *ring.Ring
	prevSig string
}

// NewView returns a View over src.
func NewView(src Membership, cfg ViewConfig) *View {
	return &View{src: src, cfg: cfg}
}

// Ring returns the current ring, rebuilt if the peer set changed since the
// last call. The returned ring is immutable.
func (v *View) Ring() *ring.Ring {
	cur, _ := v.src.Epoch()
	if cur.Number > 0 {
		return v.epochRing(cur)
	}
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

// epochRing returns the ring of epoch e, cached by its hash. The ring it
// replaces becomes the previous ring.
func (v *View) epochRing(e Epoch) *ring.Ring {
	sig := fmt.Sprintf("epoch %d %x", e.Number, e.Hash())
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ring != nil && sig == v.sig {
		return v.ring
	}
	r, err := e.Ring()
	if err != nil { // decodeEpoch already refused such records
		return v.ring
	}
	if v.ring != nil {
		v.prev, v.prevSig = v.ring, v.sig
	}
	v.sig, v.ring = sig, r
	return r
}

// PrevRing returns the ring of the layout before the current epoch, nil
// when there is none.
func (v *View) PrevRing() *ring.Ring {
	v.Ring()
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.prev
}

// EpochNumber is the current ring epoch (0: membership ring, no epoch).
func (v *View) EpochNumber() uint64 {
	cur, _ := v.src.Epoch()
	return cur.Number
}

// PrevPlacement is Placement under the previous layout; ok is false when
// there is none or it places the key on the same peers.
func (v *View) PrevPlacement(bucket, key string, n int) ([]meta.PeerID, bool) {
	prev := v.PrevRing()
	if prev == nil {
		return nil, false
	}
	p, err := prev.Placement(bucket+"/"+key, n)
	if err != nil {
		return nil, false
	}
	cur, err := v.Placement(bucket, key, n)
	if err == nil && sameSet(p, cur) {
		return nil, false
	}
	return p, true
}

func sameSet(a, b []meta.PeerID) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[meta.PeerID]bool{}
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
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
