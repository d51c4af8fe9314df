package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Stats are a node's fast-changing load figures. They change every
// second, so they do not travel in NodeMeta (each meta update costs an
// incarnation and a full alive broadcast) but in small gossip messages of
// their own, one per node per StatsInterval, each replacing the last.
type Stats struct {
	// SendBps and RecvBps are shard API bytes per second, sent and
	// received, over the last interval.
	SendBps float64 `json:"s"`
	RecvBps float64 `json:"r"`
	// CPU is the host's CPU utilisation over the last interval, 0..1.
	CPU float64 `json:"c"`
	// Active is the number of shard requests in progress.
	Active int `json:"a"`
	// Epoch is the ring epoch the node works with.
	Epoch uint64 `json:"e"`
	// Objects is the number of live objects a peer holds a shard of.
	Objects int64 `json:"o,omitempty"`
	// Settled is, from the gateway that moves data, the newest epoch a
	// full pass found every object placed by (Layouts.Settled).
	Settled uint64 `json:"m,omitempty"`
}

// StatsInterval is how often a node samples and gossips its Stats.
const StatsInterval = time.Second

// statsMsgMax bounds a stats message; anything larger is not ours.
const statsMsgMax = 1024

// msgStats tags a user message as a stats message; the tag leaves room
// for other message kinds.
const msgStats byte = 's'

// statsMsg is the gossiped form: who, when (the origin's clock, for
// ordering its own messages only) and what. A hosted member's messages,
// sent by its host, also carry its membership: the host, its meta and
// whether it stopped. They are the only way other nodes learn of it.
type statsMsg struct {
	Origin string    `json:"o"`
	Seq    int64     `json:"q"`
	Stats  Stats     `json:"t"`
	Host   string    `json:"h,omitempty"`
	Meta   *NodeMeta `json:"n,omitempty"`
	Down   bool      `json:"d,omitempty"`
}

func encodeStats(m statsMsg) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode stats: %w", err)
	}
	return append([]byte{msgStats}, b...), nil
}

// decodeStats parses a stats message from another node: untrusted input
// (though authenticated by the gossip key), so every failure is an error.
func decodeStats(b []byte) (statsMsg, error) {
	var m statsMsg
	if len(b) < 2 || b[0] != msgStats {
		return m, errors.New("decode stats: not a stats message")
	}
	if len(b) > statsMsgMax {
		return m, fmt.Errorf("decode stats: %d bytes", len(b))
	}
	if err := json.Unmarshal(b[1:], &m); err != nil {
		return m, fmt.Errorf("decode stats: %w", err)
	}
	if m.Origin == "" || m.Seq <= 0 {
		return m, errors.New("decode stats: missing origin or sequence")
	}
	if m.Host != "" && (m.Meta == nil || m.Meta.ID != m.Origin || m.Host == m.Origin) {
		return m, errors.New("decode stats: hosted member without its own meta")
	}
	return m, nil
}

// statsBroadcast is one queued stats message. Its name invalidates the
// older message of the same origin still in the queue, so the queue holds
// at most one message per node.
type statsBroadcast struct {
	origin string
	msg    []byte
}

func (b *statsBroadcast) Invalidates(o memberlist.Broadcast) bool {
	nb, ok := o.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.Name()
}
func (b *statsBroadcast) Name() string    { return "stats:" + b.origin }
func (b *statsBroadcast) Message() []byte { return b.msg }
func (b *statsBroadcast) Finished()       {}

// statsGossip spreads every node's stats epidemically: a node queues its
// own each interval, and re-queues every newer one it receives, so each
// message reaches every member within a few gossip rounds even though
// memberlist sends a broadcast to only a few random nodes at a time.
type statsGossip struct {
	self  string
	reg   *registry
	queue *memberlist.TransmitLimitedQueue

	// settled, when set, hears every Stats.Settled accepted.
	settled func(uint64)
	// hosted, when set, records the membership a hosted member's message
	// carries before its stats are stored, and reports false to refuse
	// the message.
	hosted func(statsMsg) bool

	mu   sync.Mutex
	seqs map[string]int64 // newest sequence seen per origin
}

func newStatsGossip(self string, reg *registry, numNodes func() int) *statsGossip {
	return &statsGossip{self: self, reg: reg, seqs: map[string]int64{},
		queue: &memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: 3}}
}

// publish records this node's own stats and queues them for gossip.
func (g *statsGossip) publish(st Stats, now time.Time) error {
	return g.publishMsg(statsMsg{Origin: g.self, Seq: now.UnixNano(), Stats: st})
}

// publishMsg records m, this node's own or a hosted member's, and queues
// it for gossip.
func (g *statsGossip) publishMsg(m statsMsg) error {
	b, err := encodeStats(m)
	if err != nil {
		return err
	}
	g.accept(m)
	g.queue.QueueBroadcast(&statsBroadcast{origin: m.Origin, msg: b})
	return nil
}

// receive handles a stats message from the network. It reports whether
// the message was new, in which case it is passed on.
func (g *statsGossip) receive(b []byte) bool {
	m, err := decodeStats(b)
	if err != nil || m.Origin == g.self || !g.accept(m) {
		return false
	}
	g.queue.QueueBroadcast(&statsBroadcast{origin: m.Origin, msg: append([]byte(nil), b...)})
	return true
}

// accept stores m if it is newer than what is known of its origin.
func (g *statsGossip) accept(m statsMsg) bool {
	g.mu.Lock()
	if m.Seq <= g.seqs[m.Origin] {
		g.mu.Unlock()
		return false
	}
	g.seqs[m.Origin] = m.Seq
	g.mu.Unlock()
	if m.Host != "" && g.hosted != nil && !g.hosted(m) {
		return false
	}
	if m.Stats.Settled > 0 && g.settled != nil {
		g.settled(m.Stats.Settled)
	}
	return g.reg.setStats(m.Origin, m.Stats, time.Now())
}

// forget drops the queue's remaining messages (on Close).
func (g *statsGossip) forget() { g.queue.Reset() }
