package cluster

import (
	"fmt"
	"slices"
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
	// Layouts returns the adopted ring epoch (Number 0: none, and the ring
	// is then built from membership), the older layouts data may still sit
	// on and how far data is known to have moved, all read only, with a
	// generation that grows whenever they change.
	Layouts() (l Layouts, gen uint64)
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
	sig  string // what the cached ring was built from
	ring *ring.Ring
	// The epoch rings, rebuilt when the Layouts' generation moves: the
	// current one and the older ones, newest first.
	gen        uint64
	synced     bool
	epoch      uint64
	cur        *ring.Ring
	older      []*ring.Ring
	rings      map[string]*ring.Ring // by epochSig, so a layout is built once
	onEpoch    bool                  // ring is an epoch's, not the membership ring
	settledAny bool
	// pre is the membership ring served before the first epoch: data
	// written then sits where it placed keys until a move settles.
	pre *ring.Ring
}

// NewView returns a View over src.
func NewView(src Membership, cfg ViewConfig) *View {
	return &View{src: src, cfg: cfg}
}

// Ring returns the current ring, rebuilt if the peer set changed since the
// last call. The returned ring is immutable.
func (v *View) Ring() *ring.Ring {
	if r := v.syncEpochs(); r != nil {
		return r
	}
	members := v.src.Peers()
	sig := signature(members)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ring != nil && sig == v.sig {
		return v.ring
	}
	v.sig, v.ring, v.onEpoch = sig, buildRing(members, v.cfg.Ring), false
	return v.ring
}

// syncEpochs brings the epoch rings up to the Membership's Layouts and
// returns the current epoch's ring, nil while there is no epoch. A
// membership ring an epoch replaces is kept as the pre-epoch layout.
// Layouts are read before the lock, so a caller may arrive with an older
// generation than one already applied; it must not put the view back,
// or a watcher woken by the change could read the old epoch and, with
// nothing else to wake it, never act on the new one.
func (v *View) syncEpochs() *ring.Ring {
	l, gen := v.src.Layouts()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.synced && gen <= v.gen {
		return v.cur
	}
	v.synced, v.gen, v.epoch = true, gen, l.Cur.Number
	v.settledAny = l.Settled > 0
	if l.Cur.Number == 0 {
		v.cur, v.older = nil, nil
		return nil
	}
	rings := map[string]*ring.Ring{}
	build := func(e Epoch) *ring.Ring {
		sig := epochSig(e)
		r, ok := v.rings[sig]
		if !ok {
			r, _ = e.Ring() // decodeEpoch already refused records that build none
		}
		if r != nil {
			rings[sig] = r
		}
		return r
	}
	cur := build(l.Cur)
	if cur == nil {
		return v.ring
	}
	v.older = v.older[:0:0]
	for _, e := range l.Older {
		if r := build(e); r != nil {
			v.older = append(v.older, r)
		}
	}
	if v.ring != nil && !v.onEpoch {
		v.pre = v.ring
	}
	v.rings, v.cur, v.ring, v.sig, v.onEpoch = rings, cur, cur, "", true
	return cur
}

func epochSig(e Epoch) string { return fmt.Sprintf("%d %x", e.Number, e.Hash()) }

// OlderRings returns the rings of the layouts before the current one that
// data may still sit on, newest first.
func (v *View) OlderRings() []*ring.Ring {
	_, older := v.layoutRings()
	return slices.Clone(older)
}

// layoutRings returns the current ring and the older ones, newest first, from
// one look at the Membership; the older slice is shared, read only.
func (v *View) layoutRings() (*ring.Ring, []*ring.Ring) {
	cur := v.Ring()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pre != nil && !v.settledAny {
		return cur, append(slices.Clip(v.older), v.pre)
	}
	return cur, v.older
}

// EpochNumber is the current ring epoch (0: membership ring, no epoch).
func (v *View) EpochNumber() uint64 {
	v.Ring()
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.epoch
}

// OlderPlacements returns bucket/key's placements under the older layouts,
// newest first, each once and none equal to the current placement.
func (v *View) OlderPlacements(bucket, key string, n int) [][]meta.PeerID {
	curRing, older := v.layoutRings()
	cur, err := curRing.Placement(ringKey(bucket, key), n)
	var out [][]meta.PeerID
	for _, r := range older {
		p, perr := r.Placement(ringKey(bucket, key), n)
		if perr != nil || (err == nil && sameSet(p, cur)) || slices.ContainsFunc(out, func(q []meta.PeerID) bool { return sameSet(p, q) }) {
			continue
		}
		out = append(out, p)
	}
	return out
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
	p, err := v.Ring().Placement(ringKey(bucket, key), n)
	if err != nil {
		return nil, fmt.Errorf("place %s/%s: %w", bucket, key, err)
	}
	return p, nil
}

// ringKey is what places an object on the ring: its bucket and key, the
// version left out, so that every version of a key shares its peers.
func ringKey(bucket, key string) string { return bucket + "/" + meta.PlacementKey(key) }

// Peers returns every peer on the ring, alive or not, sorted by ID.
func (v *View) Peers() []meta.PeerID {
	rp := v.Ring().Peers()
	out := make([]meta.PeerID, len(rp))
	for i, p := range rp {
		out[i] = p.ID
	}
	return out
}

// Leaving returns the peers on the current ring without tokens: no key
// is placed on them, so whatever they hold is waiting to move off (a
// peer being drained) or is a stray copy.
func (v *View) Leaving() []meta.PeerID {
	var out []meta.PeerID
	for _, p := range v.Ring().Peers() {
		if p.Vnodes == 0 {
			out = append(out, p.ID)
		}
	}
	return out
}

// Member returns what is known about a peer.
func (v *View) Member(id meta.PeerID) (Member, bool) { return v.src.Member(string(id)) }
