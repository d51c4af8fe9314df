package cluster

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// Role is what a node does in the cluster.
type Role string

// Roles. Only peers hold shards and appear on the ring.
const (
	RolePeer    Role = "peer"
	RoleGateway Role = "gateway"
)

// ErrInvalidConfig reports a Config that Start cannot use.
var ErrInvalidConfig = errors.New("cluster: invalid config")

// gossipLabel is bound into every gossip packet as authenticated data, so
// traffic from another memberlist application is rejected before decode.
const gossipLabel = "tessera"

// Config configures a Node.
type Config struct {
	// NodeID names the node in gossip; for a peer it is its meta.PeerID.
	// It must be unique and stable across restarts.
	NodeID string
	Role   Role
	// BindAddr is the gossip host:port (UDP and TCP). Port 0 lets the
	// kernel pick one; Node.Addr reports it.
	BindAddr string
	// AdvertiseAddr is the host:port other nodes should dial, when it
	// differs from BindAddr (NAT, 0.0.0.0 binds). Port 0 means the bound
	// port.
	AdvertiseAddr string
	// Join lists gossip addresses of existing members; empty starts a new
	// cluster.
	Join []string
	// Secret is the cluster secret. The gossip key is derived from it, so
	// all members must share it. Required.
	Secret []byte
	// Meta returns this node's current metadata. memberlist calls it with
	// its locks held whenever it advertises the node: it must be fast and
	// must not call into the Node. ID and Role are forced from the Config.
	// Nil advertises ID and Role only.
	Meta func() NodeMeta
	// Logger receives lifecycle events and memberlist's own log (debug
	// level, component=gossip).
	Logger zerolog.Logger
	// Timing tunes failure detection; the zero value means LocalTiming().
	Timing Timing
	// Stats, when set, is sampled every StatsInterval and gossiped to
	// every member (Member.Stats). It must be fast and must not call into
	// the Node.
	Stats func() Stats
	// EpochFile, when set, persists the adopted ring epoch across
	// restarts (peers keep it in their data directory).
	EpochFile string
	// Propose lets this node mint ring epochs when it is the alive peer
	// with the lowest ID (one proposer at a time). Off, the node only
	// follows epochs others mint; with nobody proposing, the ring is the
	// membership ring of every peer seen, weight 1.
	Propose bool
	// ProposeInterval is how often the proposer re-checks the layout, and
	// the least time between two epochs it mints (2 s).
	ProposeInterval time.Duration
	// RingWidth is how many distinct peers each object's shards go to
	// (data+parity of the code in use). The proposer then balances each
	// peer's share of stored shards rather than of first choices; see
	// ring.BalanceConfig.Width. 0 or 1 balances first choices. Every peer
	// should use the same value, since any of them may become proposer.
	RingWidth int
}

// Timing holds the memberlist intervals that decide how fast membership
// converges and failures are detected.
type Timing struct {
	ProbeInterval    time.Duration // how often a random member is probed
	ProbeTimeout     time.Duration // wait for a direct probe ack
	GossipInterval   time.Duration // how often queued broadcasts are sent
	PushPullInterval time.Duration // full state sync with a random member
	TCPTimeout       time.Duration // stream connections (join, push/pull)
	// SuspicionMult scales how long a suspect has to refute before it is
	// declared dead: SuspicionMult × log10(N) × ProbeInterval at least.
	SuspicionMult int
	// GossipToTheDeadTime is how long dead nodes still receive gossip (so
	// a partitioned node can learn it was declared dead) before memberlist
	// forgets them. The Node's own registry keeps them regardless.
	GossipToTheDeadTime time.Duration
	// DeadNodeReclaimTime lets a restarted node reuse its name from a new
	// address once it has been dead this long.
	DeadNodeReclaimTime time.Duration
	// ReconnectInterval is how often the Node dials the members it records
	// dead (memberlist never does), so a healed partition rejoins; see
	// reconnect.go. Zero means DefaultReconnectInterval.
	ReconnectInterval time.Duration
}

// LocalTiming is memberlist's DefaultLocalConfig: 1 s probes, 100 ms
// gossip, a dead node detected in a few seconds. Suitable for a LAN.
func LocalTiming() Timing {
	c := memberlist.DefaultLocalConfig()
	return Timing{
		ProbeInterval:       c.ProbeInterval,
		ProbeTimeout:        c.ProbeTimeout,
		GossipInterval:      c.GossipInterval,
		PushPullInterval:    c.PushPullInterval,
		TCPTimeout:          c.TCPTimeout,
		SuspicionMult:       c.SuspicionMult,
		GossipToTheDeadTime: c.GossipToTheDeadTime,
		DeadNodeReclaimTime: 30 * time.Second,
		ReconnectInterval:   DefaultReconnectInterval,
	}
}

// FastTiming is tuned for loopback: nodes in one process or on one host,
// and tests. A join is visible everywhere within about 100 ms (gossip
// every 20 ms), and a stopped node is declared dead within about a second
// (probe every 200 ms; SuspicionMult 2 leaves no wait for confirmations,
// so the suspicion timeout is its minimum, 2 × 200 ms for small clusters).
// Too aggressive across real networks: a GC pause would read as a death.
func FastTiming() Timing {
	return Timing{
		ProbeInterval:       200 * time.Millisecond,
		ProbeTimeout:        100 * time.Millisecond,
		GossipInterval:      20 * time.Millisecond,
		PushPullInterval:    2 * time.Second,
		TCPTimeout:          time.Second,
		SuspicionMult:       2,
		GossipToTheDeadTime: 2 * time.Second,
		DeadNodeReclaimTime: time.Second,
		ReconnectInterval:   time.Second,
	}
}

func (c *Config) validate() error {
	switch {
	case c.NodeID == "":
		return fmt.Errorf("%w: node id required", ErrInvalidConfig)
	case c.Role != RolePeer && c.Role != RoleGateway:
		return fmt.Errorf("%w: role %q", ErrInvalidConfig, c.Role)
	case len(c.Secret) == 0:
		return fmt.Errorf("%w: cluster secret required", ErrInvalidConfig)
	}
	if c.Timing == (Timing{}) {
		c.Timing = LocalTiming()
	}
	if c.Timing.ReconnectInterval == 0 {
		c.Timing.ReconnectInterval = DefaultReconnectInterval
	}
	return c.Timing.validate()
}

// validate rejects a partly filled Timing: memberlist treats some zero
// intervals as "disabled", which would silently stop failure detection.
func (t Timing) validate() error {
	for _, d := range []time.Duration{t.ProbeInterval, t.ProbeTimeout, t.GossipInterval,
		t.PushPullInterval, t.TCPTimeout, t.GossipToTheDeadTime, t.DeadNodeReclaimTime, t.ReconnectInterval} {
		if d <= 0 {
			return fmt.Errorf("%w: timing %+v: every interval must be positive", ErrInvalidConfig, t)
		}
	}
	if t.SuspicionMult < 1 || t.ProbeTimeout >= t.ProbeInterval {
		return fmt.Errorf("%w: timing %+v: need SuspicionMult >= 1 and ProbeTimeout < ProbeInterval", ErrInvalidConfig, t)
	}
	return nil
}

// gossipKey derives the 32-byte AES-256 gossip key from the cluster
// secret. The label keeps it independent of other keys derived from the
// same secret (the peer API's).
func gossipKey(secret []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, "tessera gossip key v1", 32)
}

// memberlistConfig translates c (already validated) for memberlist.
func (c Config) memberlistConfig(d memberlist.Delegate, e memberlist.EventDelegate, logw *logBridge) (*memberlist.Config, error) {
	mc := memberlist.DefaultLocalConfig()
	mc.Name = c.NodeID
	mc.Label = gossipLabel
	host, port, err := splitHostPort(c.BindAddr, "0.0.0.0")
	if err != nil {
		return nil, fmt.Errorf("%w: bind address: %v", ErrInvalidConfig, err)
	}
	mc.BindAddr, mc.BindPort, mc.AdvertisePort = host, port, port
	if c.AdvertiseAddr != "" {
		ahost, aport, err := splitHostPort(c.AdvertiseAddr, "")
		if err != nil || ahost == "" {
			return nil, fmt.Errorf("%w: advertise address %q", ErrInvalidConfig, c.AdvertiseAddr)
		}
		mc.AdvertiseAddr = ahost
		if aport != 0 {
			mc.AdvertisePort = aport
		}
	}
	key, err := gossipKey(c.Secret)
	if err != nil {
		return nil, fmt.Errorf("derive gossip key: %w", err)
	}
	mc.SecretKey = key
	mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	t := c.Timing
	mc.ProbeInterval, mc.ProbeTimeout = t.ProbeInterval, t.ProbeTimeout
	mc.GossipInterval, mc.PushPullInterval = t.GossipInterval, t.PushPullInterval
	mc.TCPTimeout, mc.SuspicionMult = t.TCPTimeout, t.SuspicionMult
	mc.GossipToTheDeadTime, mc.DeadNodeReclaimTime = t.GossipToTheDeadTime, t.DeadNodeReclaimTime
	mc.Delegate, mc.Events = d, e
	mc.Logger = logw.stdLogger()
	return mc, nil
}

// splitHostPort parses host:port; an empty host becomes defHost.
func splitHostPort(addr, defHost string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q", ps)
	}
	if host == "" {
		host = defHost
	}
	return host, port, nil
}
