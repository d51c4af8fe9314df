package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// ErrClosed reports a call on a Node after Close.
var ErrClosed = errors.New("cluster: node closed")

// Node is this process's membership in the cluster.
type Node struct {
	cfg  Config
	log  zerolog.Logger
	ml   *memberlist.Memberlist
	reg  *registry
	meta *metaSource
	view *View

	// life serialises Leave and Close: memberlist panics on Leave after
	// Shutdown.
	life   sync.Mutex
	closed bool

	// joined is set once a Join succeeded, or at start when there is
	// nothing to join. Until then the node sees only itself and must not
	// mint ring epochs: a lone peer whose join is slow would otherwise
	// publish a one-peer layout the whole cluster then adopts.
	joined atomic.Bool

	// hosted are the members this node hosts (hosted.go), by ID.
	hostMu sync.Mutex
	hosted map[string]*Hosted

	stopStats chan struct{}
	statsDone chan struct{}
	lastStats time.Time // touched only by the background loop
	reconnect *reconnector
}

// Start creates the node's gossip endpoint and, if cfg.Join is set, joins
// the cluster, retrying until one join address answers or ctx ends. On
// error nothing is left running.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With().Str("component", "cluster").Str("node", cfg.NodeID).Logger()
	n := &Node{cfg: cfg, log: log, reg: newRegistry(), hosted: map[string]*Hosted{}}
	n.meta = &metaSource{id: cfg.NodeID, role: cfg.Role, fn: cfg.Meta, log: log}
	n.meta.stats = newStatsGossip(cfg.NodeID, n.reg, n.numMembers)
	n.meta.epochs = newEpochs(cfg.EpochFile, n.reg, log, n.numMembers)
	n.meta.stats.settled = n.meta.epochs.settle
	n.meta.stats.hosted = n.recordHosted
	// Checked before memberlist sees it: an oversized first meta would
	// panic inside memberlist.Create.
	if _, err := n.meta.encode(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.NodeID, err)
	}
	mc, err := cfg.memberlistConfig(n.meta, &events{reg: n.reg, log: log, hosted: n.hosts}, newLogBridge(cfg.Logger))
	if err != nil {
		return nil, err
	}
	if n.ml, err = memberlist.Create(mc); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.NodeID, err)
	}
	n.view = NewView(n, ViewConfig{})
	n.joined.Store(len(cfg.Join) == 0)
	n.startStats()
	if len(cfg.Join) > 0 {
		if err := n.Join(ctx, cfg.Join...); err != nil {
			_ = n.Close()
			return nil, err
		}
	}
	n.startReconnect()
	log.Info().Str("addr", n.Addr()).Str("role", string(cfg.Role)).Msg("gossip started")
	return n, nil
}

// Join contacts the given gossip addresses and merges state with every
// one that answers. It retries with backoff until at least one answered
// or ctx ends. A node with another cluster secret never answers.
func (n *Node) Join(ctx context.Context, addrs ...string) error {
	backoff := n.cfg.Timing.GossipInterval * 5
	for {
		joined, err := n.ml.Join(addrs)
		if joined > 0 {
			n.joined.Store(true)
			n.log.Info().Int("contacted", joined).Strs("join", addrs).Msg("joined cluster")
			return nil
		}
		n.log.Debug().Err(err).Strs("join", addrs).Msg("join attempt failed")
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("join %v: %w (last error: %v)", addrs, ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// ID returns the node's ID.
func (n *Node) ID() string { return n.cfg.NodeID }

// Addr returns the gossip address other nodes reach this one at, with the
// real port when Config.BindAddr asked for port 0.
func (n *Node) Addr() string {
	m, _ := n.reg.get(n.cfg.NodeID)
	return m.Addr
}

// Members returns every node ever seen, this one included, sorted by ID.
func (n *Node) Members() []Member { return n.reg.list(nil) }

// Peers returns the members with role peer, whatever their state, sorted
// by ID.
func (n *Node) Peers() []Member {
	return n.reg.list(func(m Member) bool { return m.Role == RolePeer })
}

// Member returns one member by ID.
func (n *Node) Member(id string) (Member, bool) { return n.reg.get(id) }

// View returns the node's ring view of its peers.
func (n *Node) View() *View { return n.view }

// Subscribe returns a channel that receives a value after membership or
// member meta changes. Wake-ups coalesce: one value may stand for many
// changes, so readers re-read Members. cancel releases the subscription
// and closes the channel; Close closes every channel.
func (n *Node) Subscribe() (ch <-chan struct{}, cancel func()) { return n.reg.subscribe() }

// WaitPeers blocks until at least count members with role peer (this
// node included, if it is one) are alive, or ctx ends.
func (n *Node) WaitPeers(ctx context.Context, count int) error {
	ch, cancel := n.Subscribe()
	defer cancel()
	for {
		alive := len(n.reg.list(func(m Member) bool { return m.Role == RolePeer && m.State == StateAlive }))
		if alive >= count {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d peers (have %d): %w", count, alive, ctx.Err())
		case _, ok := <-ch:
			if !ok {
				return ErrClosed
			}
		}
	}
}

// UpdateMeta re-reads Config.Meta and broadcasts it. It fails with
// ErrMetaTooLarge, advertising nothing new, if the meta does not fit. It
// waits for the broadcast to reach one member, until ctx's deadline or,
// without one, Timing.TCPTimeout.
func (n *Node) UpdateMeta(ctx context.Context) error {
	if _, err := n.meta.encode(); err != nil {
		return fmt.Errorf("update meta: %w", err)
	}
	n.life.Lock()
	defer n.life.Unlock()
	if n.closed {
		return ErrClosed
	}
	timeout := n.cfg.Timing.TCPTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	if err := n.ml.UpdateNode(timeout); err != nil {
		return fmt.Errorf("update meta: %w", err)
	}
	return nil
}

// Leave tells the cluster this node is going away, so others mark it Left
// at once instead of probing it to death. It first advertises
// NodeMeta.Leaving, then memberlist's leave message, waiting up to timeout
// for each broadcast. A member that hears the leave before the meta (a
// gossip race) records Dead. The node keeps gossiping until Close.
func (n *Node) Leave(timeout time.Duration) error {
	n.life.Lock()
	defer n.life.Unlock()
	if n.closed {
		return ErrClosed
	}
	n.meta.leaving.Store(true)
	// The leave message would supersede a still-queued meta update for
	// this node, so the update has to go out first.
	if err := n.ml.UpdateNode(timeout); err != nil {
		n.log.Warn().Err(err).Msg("leaving flag not broadcast; others may record this node dead")
	}
	if err := n.ml.Leave(timeout); err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	n.log.Info().Msg("left cluster")
	return nil
}

// Close stops gossip and every goroutine memberlist started, and closes
// all subscriptions. Without a prior Leave, others detect the node as
// Dead. Safe to call more than once.
func (n *Node) Close() error {
	n.life.Lock()
	defer n.life.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	n.stopStatsLoop()
	if n.reconnect != nil {
		n.reconnect.halt()
	}
	err := n.ml.Shutdown()
	if n.reconnect != nil {
		n.reconnect.wait()
	}
	n.reg.close()
	n.log.Info().Msg("gossip stopped")
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}
