package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrHosted reports a Host call for an ID this node cannot host: its own,
// one it already hosts, or one another node gossips under.
var ErrHosted = errors.New("cluster: member id taken")

// HostedConfig describes a member a Node hosts.
type HostedConfig struct {
	// NodeID names the member; for a peer it is its meta.PeerID.
	NodeID string
	Role   Role
	// Meta returns the member's current metadata, read by Host and
	// Hosted.UpdateMeta. ID and Role are forced from the config.
	Meta func() NodeMeta
	// Stats, when set, is sampled every StatsInterval into the member's
	// Member.Stats and gossiped. It must be fast and must not call into
	// the Node.
	Stats func() Stats
}

// Hosted is a member that lives in its host Node's process and has no
// gossip endpoint of its own (the storage peers of `tessera server`).
// Nothing probes it: it is alive from Host until Close, which records it
// dead at once, as a crash looks, so it stays on the ring with its
// placements. Its meta and stats go straight into the host's registry, so
// the host's View, subscribers and proposer see it like any member.
//
// Other nodes learn of a hosted member from its stats messages, which the
// host gossips every StatsInterval with the member's meta (and one last
// time, marked down, on Close). They record it with no gossip address and
// Member.Host set, and record it dead when its host dies.
type Hosted struct {
	n   *Node
	cfg HostedConfig

	// mu orders samples, meta updates and Close: after Close returns, the
	// config's functions are not called again.
	mu     sync.Mutex
	closed bool
}

// Host adds a member this node vouches for. It fails with ErrHosted if
// the ID is this node's, is hosted here already, or is an alive member's
// (a gossip member or one another node hosts); and with ErrMetaTooLarge
// if the meta would not fit gossip.
func (n *Node) Host(cfg HostedConfig) (*Hosted, error) {
	if cfg.NodeID == "" || (cfg.Role != RolePeer && cfg.Role != RoleGateway) {
		return nil, fmt.Errorf("%w: hosted member %q, role %q", ErrInvalidConfig, cfg.NodeID, cfg.Role)
	}
	h := &Hosted{n: n, cfg: cfg}
	m, err := h.meta()
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", cfg.NodeID, err)
	}
	n.life.Lock()
	closed := n.closed
	n.life.Unlock()
	if closed {
		return nil, ErrClosed
	}
	n.hostMu.Lock()
	old, known := n.reg.get(cfg.NodeID)
	_, hosted := n.hosted[cfg.NodeID]
	if cfg.NodeID == n.cfg.NodeID || hosted || (known && old.State == StateAlive) {
		n.hostMu.Unlock()
		return nil, fmt.Errorf("host %s: %w", cfg.NodeID, ErrHosted)
	}
	n.hosted[cfg.NodeID] = h
	n.reg.update(cfg.NodeID, func(Member, bool) Member {
		// A dead member of this name is replaced whole: a gossip
		// member's address must not be dialled as this member's.
		return Member{NodeMeta: m, State: StateAlive, Host: n.cfg.NodeID}
	})
	n.hostMu.Unlock()
	n.log.Info().Str("member", cfg.NodeID).Str("role", string(cfg.Role)).Msg("hosted member alive")
	h.sample(time.Now())
	return h, nil
}

// hosts reports whether id is a member this node hosts.
func (n *Node) hosts(id string) bool {
	n.hostMu.Lock()
	defer n.hostMu.Unlock()
	_, ok := n.hosted[id]
	return ok
}

// hostedMembers returns the members hosted now.
func (n *Node) hostedMembers() []*Hosted {
	n.hostMu.Lock()
	defer n.hostMu.Unlock()
	out := make([]*Hosted, 0, len(n.hosted))
	for _, h := range n.hosted {
		out = append(out, h)
	}
	return out
}

// meta is the member's current meta with ID and Role forced, checked
// against MetaMaxSize like a gossip member's.
func (h *Hosted) meta() (NodeMeta, error) {
	var m NodeMeta
	if h.cfg.Meta != nil {
		m = h.cfg.Meta()
	}
	m.ID, m.Role, m.Leaving = h.cfg.NodeID, h.cfg.Role, false
	if _, err := EncodeMeta(m); err != nil {
		return NodeMeta{}, err
	}
	return m, nil
}

// ID returns the member's ID.
func (h *Hosted) ID() string { return h.cfg.NodeID }

// Addr returns the host's gossip address: the way into the cluster the
// member is part of.
func (h *Hosted) Addr() string { return h.n.Addr() }

// Members returns every member the host knows, this one included.
func (h *Hosted) Members() []Member { return h.n.Members() }

// View returns the host's ring view: the member is placed by the ring
// its host follows.
func (h *Hosted) View() *View { return h.n.View() }

// UpdateMeta re-reads HostedConfig.Meta into the host's registry, waking
// its subscribers. It fails with ErrMetaTooLarge, recording nothing new,
// if the meta does not fit, and with ErrClosed after Close. Nothing is
// sent, so ctx is unused; it is there to match Node.UpdateMeta.
func (h *Hosted) UpdateMeta(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	m, err := h.meta()
	if err != nil {
		return fmt.Errorf("update meta: %w", err)
	}
	h.n.reg.update(h.cfg.NodeID, func(old Member, _ bool) Member {
		old.NodeMeta = m
		return old
	})
	return nil
}

// sample records the member's stats, stamped with the host's epoch, as a
// gossip member's stats message would, and gossips them with the meta the
// host holds.
func (h *Hosted) sample(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	var st Stats
	if h.cfg.Stats != nil {
		st = h.cfg.Stats()
	}
	cur, _ := h.n.Epoch()
	st.Epoch = cur.Number
	h.publish(st, false, now)
}

// publish gossips the member's stats and membership; h.mu is held.
func (h *Hosted) publish(st Stats, down bool, now time.Time) {
	m, ok := h.n.reg.get(h.cfg.NodeID)
	if !ok {
		return // the host closed before it recorded the member
	}
	msg := statsMsg{Origin: h.cfg.NodeID, Seq: now.UnixNano(), Stats: st, Host: h.n.cfg.NodeID, Meta: &m.NodeMeta, Down: down}
	if err := h.n.meta.stats.publishMsg(msg); err != nil {
		h.n.log.Warn().Err(err).Str("member", h.cfg.NodeID).Msg("hosted member's stats not gossiped")
	}
}

// recordHosted records the membership a hosted member's stats message
// carries, from another node: the member, alive unless it stopped or its
// host is dead. It refuses members this node hosts or is, and IDs a live
// gossip member holds.
func (n *Node) recordHosted(m statsMsg) bool {
	if m.Host == n.cfg.NodeID {
		return true // this node's own, already in the registry
	}
	if m.Origin == n.cfg.NodeID || n.hosts(m.Origin) {
		return false
	}
	state := StateAlive
	if host, ok := n.reg.get(m.Host); m.Down || (ok && host.State != StateAlive) {
		state = StateDead
	}
	accepted, moved := true, false
	n.reg.change(m.Origin, func(old Member, ok bool) (Member, bool) {
		if ok && old.Addr != "" && old.State == StateAlive {
			accepted = false
			return old, false
		}
		next := old
		next.NodeMeta, next.State, next.Addr, next.Host = *m.Meta, state, "", m.Host
		moved = !ok || old.State != state
		return next, moved || next.NodeMeta != old.NodeMeta || next.Host != old.Host || old.Addr != ""
	})
	if moved {
		msg := "hosted member alive"
		if state != StateAlive {
			msg = "hosted member stopped"
		}
		n.log.Info().Str("member", m.Origin).Str("role", string(m.Meta.Role)).Str("host", m.Host).Msg(msg)
	}
	return accepted
}

// Close stops the member: the host records it dead at once, keeping it on
// the ring, and stops sampling it. Safe to call more than once.
func (h *Hosted) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.n.hostMu.Lock()
	delete(h.n.hosted, h.cfg.NodeID)
	h.n.hostMu.Unlock()
	h.n.reg.update(h.cfg.NodeID, func(old Member, _ bool) Member {
		old.State = StateDead
		return old
	})
	h.publish(Stats{}, true, time.Now())
	h.n.log.Info().Str("member", h.cfg.NodeID).Str("role", string(h.cfg.Role)).Msg("hosted member stopped")
	return nil
}
