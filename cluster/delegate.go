package cluster

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// metaSource produces this node's encoded NodeMeta for memberlist.
type metaSource struct {
	id   string
	role Role
	fn   func() NodeMeta
	log  zerolog.Logger

	leaving atomic.Bool
	stats   *statsGossip
	epochs  *epochs

	mu   sync.Mutex
	last []byte // the last encoding that fit; what a failed refresh falls back to
}

// current returns this node's meta with the fields the Node owns forced.
func (s *metaSource) current() NodeMeta {
	var m NodeMeta
	if s.fn != nil {
		m = s.fn()
	}
	m.ID, m.Role, m.Leaving = s.id, s.role, s.leaving.Load()
	return m
}

// encode encodes the current meta and, if it fits, remembers it.
func (s *metaSource) encode() ([]byte, error) {
	b, err := EncodeMeta(s.current())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.last = b
	s.mu.Unlock()
	return b, nil
}

// NodeMeta implements memberlist.Delegate. memberlist panics on meta over
// the limit, so an oversized refresh re-advertises the last good one.
func (s *metaSource) NodeMeta(limit int) []byte {
	b, err := s.encode()
	if err == nil && len(b) <= limit {
		return b
	}
	s.log.Warn().Err(err).Int("limit", limit).Msg("node meta does not fit; advertising the previous one")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// NotifyMsg receives user messages: stats and epoch records. memberlist
// reuses buf after the call, so anything kept is copied.
func (s *metaSource) NotifyMsg(buf []byte) {
	if len(buf) == 0 {
		return
	}
	switch {
	case buf[0] == msgStats && s.stats != nil:
		s.stats.receive(buf)
	case buf[0] == msgEpoch && s.epochs != nil:
		s.epochs.receive(append([]byte(nil), buf...), "gossip")
	}
}

// GetBroadcasts hands memberlist the queued messages to piggyback: the
// epoch first (rare and important), stats in the room left.
func (s *metaSource) GetBroadcasts(overhead, limit int) [][]byte {
	var out [][]byte
	if s.epochs != nil {
		out = s.epochs.queue.GetBroadcasts(overhead, limit)
		for _, b := range out {
			limit -= overhead + len(b)
		}
	}
	if s.stats != nil && limit > 0 {
		out = append(out, s.stats.queue.GetBroadcasts(overhead, limit)...)
	}
	return out
}

// LocalState carries the current epoch record in push/pull exchanges, so
// a node that missed the broadcast (or joins later) still converges.
func (s *metaSource) LocalState(join bool) []byte {
	if s.epochs == nil {
		return nil
	}
	return s.epochs.localState()
}

func (s *metaSource) MergeRemoteState(buf []byte, join bool) {
	if s.epochs != nil && len(buf) > 0 {
		s.epochs.receive(append([]byte(nil), buf...), "push/pull")
	}
}

// events feeds memberlist's membership events into the registry. Its
// methods run with memberlist's node lock held: they must not block or
// call into memberlist.
type events struct {
	reg *registry
	log zerolog.Logger
	// hosted reports the IDs of members this node hosts, which no gossip
	// member may overwrite.
	hosted func(id string) bool
}

func (e *events) NotifyJoin(n *memberlist.Node) {
	m, ok := e.record(n, StateAlive)
	if !ok {
		return
	}
	e.log.Info().Str("member", m.ID).Str("role", string(m.Role)).Str("addr", m.Addr).Msg("member alive")
}

// NotifyLeave cannot tell a leave from a death by n.State: memberlist
// v0.7.0 keeps the state in a field shadowing Node.State and passes the
// Node with it unset. A node that leaves says so in its meta first.
func (e *events) NotifyLeave(n *memberlist.Node) {
	m, ok := e.record(n, StateDead)
	if !ok {
		return
	}
	e.log.Info().Str("member", m.ID).Str("role", string(m.Role)).Str("state", m.State.String()).Msg("member gone")
	if gone := e.reg.hostGone(m.ID); len(gone) > 0 {
		e.log.Info().Str("host", m.ID).Strs("members", gone).Msg("hosted members gone with their host")
	}
}

func (e *events) NotifyUpdate(n *memberlist.Node) {
	m, ok := e.record(n, StateAlive)
	if !ok {
		return
	}
	e.log.Debug().Str("member", m.ID).Msg("member meta updated")
}

// record stores what memberlist says about n. Meta that does not decode
// leaves the previously known meta in place: a bad update must not drop
// a peer from the ring. A node recorded Dead that announced it was
// leaving is recorded Left. It reports false for a node it ignores: one
// without a name, or one claiming the ID of a member this node hosts.
func (e *events) record(n *memberlist.Node, st State) (Member, bool) {
	if n.Name == "" {
		return Member{}, false // cannot be keyed; memberlist should never send one
	}
	if e.hosted != nil && e.hosted(n.Name) {
		e.log.Warn().Str("member", n.Name).Msg("a gossip member claims the id of a member this node hosts; ignored")
		return Member{}, false
	}
	meta, err := DecodeMeta(n.Meta)
	if err != nil {
		e.log.Warn().Err(err).Str("member", n.Name).Msg("undecodable node meta")
	}
	addr := net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
	var out Member
	e.reg.update(n.Name, func(old Member, _ bool) Member {
		m := old
		if err == nil {
			m.NodeMeta = meta
		}
		m.ID = n.Name // memberlist names are unique; meta cannot claim another's
		m.State, m.Addr = st, addr
		if st == StateDead && m.Leaving {
			m.State = StateLeft
		}
		out = m
		return m
	})
	return out, true
}
