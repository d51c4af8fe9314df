package cluster

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// State is a member's liveness as this node last learnt it.
type State int

// States. memberlist reports suspicion through no delegate, and its node
// table cannot be read without racing its own locks, so a Node reports a
// suspected member as Alive until it is declared Dead; StateSuspect is for
// health layers that judge peers themselves.
const (
	StateAlive State = iota
	StateSuspect
	StateDead
	StateLeft // left gracefully (Leave)
)

func (s State) String() string {
	switch s {
	case StateAlive:
		return "alive"
	case StateSuspect:
		return "suspect"
	case StateDead:
		return "dead"
	case StateLeft:
		return "left"
	}
	return "unknown"
}

// Member is one node as this node sees it.
type Member struct {
	NodeMeta
	State State
	Addr  string    // gossip host:port; "" for a hosted member
	Since time.Time // when State last changed, by this node's clock
	// Host is, for a member without a gossip endpoint (Node.Host), the ID
	// of the node that hosts it; "" for a gossip member.
	Host string
	// Stats are the member's latest gossiped load figures, received at
	// StatsAt by this node's clock (zero before the first arrived).
	Stats   Stats
	StatsAt time.Time
}

// registry is a Node's own, never-forgetting record of the members, fed
// by memberlist's event delegate. Subscribers get a coalesced wake-up on
// every change.
type registry struct {
	mu      sync.Mutex
	members map[string]Member
	subs    map[int]chan struct{}
	nextSub int
	closed  bool
}

func newRegistry() *registry {
	return &registry{members: make(map[string]Member), subs: make(map[int]chan struct{})}
}

// update applies f to the member named id (the zero Member, ok false, if
// new), stores the result and wakes subscribers. It is a no-op after
// close: memberlist goroutines may still deliver events while shutting
// down.
func (r *registry) update(id string, f func(m Member, ok bool) Member) {
	r.change(id, func(m Member, ok bool) (Member, bool) { return f(m, ok), true })
}

// change is update for a change f may find there is nothing to make:
// when f reports false, nothing is stored and nobody is woken.
func (r *registry) change(id string, f func(m Member, ok bool) (Member, bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	old, ok := r.members[id]
	m, changed := f(old, ok)
	if !changed {
		return
	}
	if !ok || m.State != old.State {
		m.Since = time.Now()
	} else {
		m.Since = old.Since
	}
	r.members[id] = m
	r.wake()
}

// wake sends every subscriber a wake-up; r.mu is held.
func (r *registry) wake() {
	for _, ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// touch wakes subscribers without changing a member: something they
// derive from the registry (the ring epoch) changed.
func (r *registry) touch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wake()
}

// hostGone records dead every alive member host hosts: they lived in its
// process. It returns their IDs.
func (r *registry) hostGone(host string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	var gone []string
	for id, m := range r.members {
		if m.Host == host && m.Addr == "" && m.State == StateAlive {
			m.State, m.Since = StateDead, time.Now()
			r.members[id] = m
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		r.wake()
	}
	return gone
}

// setStats stores a member's stats. Stats change every second and are
// polled, so subscribers are not woken. It reports false for a member not
// (yet) known, whose stats are dropped.
func (r *registry) setStats(id string, st Stats, at time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.members[id]
	if !ok || r.closed {
		return false
	}
	m.Stats, m.StatsAt = st, at
	r.members[id] = m
	return true
}

func (r *registry) get(id string) (Member, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.members[id]
	return m, ok
}

// list returns the members keep selects, sorted by ID.
func (r *registry) list(keep func(Member) bool) []Member {
	r.mu.Lock()
	out := make([]Member, 0, len(r.members))
	for _, m := range r.members {
		if keep == nil || keep(m) {
			out = append(out, m)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (r *registry) subscribe() (<-chan struct{}, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan struct{}, 1)
	if r.closed {
		close(ch)
		return ch, func() {}
	}
	id := r.nextSub
	r.nextSub++
	r.subs[id] = ch
	return ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if c, ok := r.subs[id]; ok {
			delete(r.subs, id)
			close(c)
		}
	}
}

// close closes every subscription and freezes the registry.
func (r *registry) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for id, ch := range r.subs {
		delete(r.subs, id)
		close(ch)
	}
}
