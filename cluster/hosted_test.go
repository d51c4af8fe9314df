package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

func hostPeer(t *testing.T, n *Node, id string, box *metaBox, stats func() Stats) *Hosted {
	t.Helper()
	h, err := n.Host(HostedConfig{NodeID: id, Role: RolePeer, Meta: box.get, Stats: stats})
	if err != nil {
		t.Fatalf("host %s: %v", id, err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestHostRefuses: Host takes no ID it cannot vouch for alone, and no
// meta gossip could not carry.
func TestHostRefuses(t *testing.T) {
	n := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	hostPeer(t, n, "p1", &metaBox{}, nil)
	closed := startNode(t, testConfig("gw2", RoleGateway, &metaBox{}))
	_ = closed.Close()
	startNode(t, testConfig("p9", RolePeer, &metaBox{}, n.Addr()))
	eventually(t, "the gossip peer is alive", func() bool { return stateOf(n, "p9") == StateAlive })
	cases := []struct {
		name string
		n    *Node
		cfg  HostedConfig
		want error
	}{
		{"no id", n, HostedConfig{Role: RolePeer}, ErrInvalidConfig},
		{"no role", n, HostedConfig{NodeID: "p2"}, ErrInvalidConfig},
		{"the host's own id", n, HostedConfig{NodeID: "gw", Role: RolePeer}, ErrHosted},
		{"hosted already", n, HostedConfig{NodeID: "p1", Role: RolePeer}, ErrHosted},
		{"an alive gossip member's id", n, HostedConfig{NodeID: "p9", Role: RolePeer}, ErrHosted},
		{"meta too large", n, HostedConfig{NodeID: "p2", Role: RolePeer, Meta: func() NodeMeta {
			return NodeMeta{APIAddr: strings.Repeat("x", MetaMaxSize)}
		}}, ErrMetaTooLarge},
		{"host closed", closed, HostedConfig{NodeID: "p2", Role: RolePeer}, ErrClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := c.n.Host(c.cfg)
			if !errors.Is(err, c.want) {
				if h != nil {
					_ = h.Close()
				}
				t.Fatalf("Host: err = %v, want %v", err, c.want)
			}
		})
	}
	if _, ok := n.Member("p2"); ok {
		t.Fatal("a refused member is listed")
	}
}

// TestHostedLifecycle: a hosted peer is a member of its host's one view:
// alive with its meta and stats from Host on, meta updates wake
// subscribers, and Close records it dead at once while it stays on the
// ring; hosting the ID again brings it back.
func TestHostedLifecycle(t *testing.T) {
	n := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	ch, cancel := n.Subscribe()
	defer cancel()
	boxes := map[string]*metaBox{}
	var samples atomic.Int64
	hosted := map[string]*Hosted{}
	for _, id := range []string{"p1", "p2", "p3"} {
		boxes[id] = &metaBox{m: NodeMeta{APIAddr: "127.0.0.1:1", Capacity: 1 << 30}}
		hosted[id] = hostPeer(t, n, id, boxes[id], func() Stats { samples.Add(1); return Stats{Objects: 7} })
	}
	woken := func() bool {
		select {
		case <-ch:
			return true
		case <-time.After(2 * time.Second):
			return false
		}
	}

	steps := []struct {
		name string
		do   func() error
		// want is every peer's state and zone afterwards.
		want map[string]string
	}{
		{"hosted", func() error { return nil },
			map[string]string{"p1": "alive/", "p2": "alive/", "p3": "alive/"}},
		{"meta update", func() error {
			boxes["p2"].set(func(m *NodeMeta) { m.Zone = "z2" })
			return hosted["p2"].UpdateMeta(context.Background())
		}, map[string]string{"p1": "alive/", "p2": "alive/z2", "p3": "alive/"}},
		{"stopped", hosted["p3"].Close,
			map[string]string{"p1": "alive/", "p2": "alive/z2", "p3": "dead/"}},
		{"stopped twice", hosted["p3"].Close,
			map[string]string{"p1": "alive/", "p2": "alive/z2", "p3": "dead/"}},
		{"update after stop", func() error {
			if err := hosted["p3"].UpdateMeta(context.Background()); !errors.Is(err, ErrClosed) {
				return errors.New("UpdateMeta after Close: want ErrClosed")
			}
			return nil
		}, map[string]string{"p1": "alive/", "p2": "alive/z2", "p3": "dead/"}},
		{"hosted again", func() error {
			var err error
			hosted["p3"], err = n.Host(HostedConfig{NodeID: "p3", Role: RolePeer, Meta: boxes["p3"].get})
			return err
		}, map[string]string{"p1": "alive/", "p2": "alive/z2", "p3": "alive/"}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := map[string]string{}
		for _, m := range n.Peers() {
			got[m.ID] = m.State.String() + "/" + m.Zone
			if m.APIAddr != "127.0.0.1:1" || m.Capacity != 1<<30 || m.Addr != "" {
				t.Errorf("%s: %s = %+v; want its meta and no gossip address", s.name, m.ID, m)
			}
		}
		if !maps(got, s.want) {
			t.Errorf("%s: peers %v, want %v", s.name, got, s.want)
		}
		if peers := n.View().Peers(); !slices.Equal(peers, []meta.PeerID{"p1", "p2", "p3"}) {
			t.Errorf("%s: ring %v, want every hosted peer", s.name, peers)
		}
		if s.name != "stopped twice" && s.name != "update after stop" && !woken() {
			t.Errorf("%s: subscribers not woken", s.name)
		}
	}
	_ = hosted["p3"].Close()

	m, _ := n.Member("p1")
	if m.StatsAt.IsZero() || m.Stats.Objects != 7 {
		t.Errorf("p1 stats %+v at %v; want the sampled ones", m.Stats, m.StatsAt)
	}
	before := samples.Load()
	for _, h := range hosted {
		_ = h.Close()
	}
	time.Sleep(StatsInterval + 200*time.Millisecond)
	if after := samples.Load(); after != before {
		t.Errorf("stats sampled %d times after Close", after-before)
	}
	if got := n.WaitPeers(context.Background(), 0); got != nil {
		t.Fatal(got)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestHostedStatsFollow: a hosted member's stats are re-sampled every
// StatsInterval, stamped with the host's epoch.
func TestHostedStatsFollow(t *testing.T) {
	n := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	var objects atomic.Int64
	hostPeer(t, n, "p1", &metaBox{}, func() Stats { return Stats{Objects: objects.Load()} })
	objects.Store(42)
	eventually(t, "stats re-sampled", func() bool {
		m, _ := n.Member("p1")
		return m.Stats.Objects == 42
	})
}

// TestHostedPeersGetEpochs: a host with Propose mints epochs for the
// peers it hosts, weighted by their capacity, as the lowest alive peer
// would for itself.
func TestHostedPeersGetEpochs(t *testing.T) {
	cfg := testConfig("gw", RoleGateway, &metaBox{})
	cfg.Propose, cfg.ProposeInterval = true, 200*time.Millisecond
	n := startNode(t, cfg)
	for i, c := range []uint64{1, 2, 1} {
		hostPeer(t, n, "p"+string(rune('1'+i)), &metaBox{m: NodeMeta{Capacity: c << 30}}, nil)
	}
	eventually(t, "an epoch of the hosted peers", func() bool {
		cur, _ := n.Epoch()
		return len(cur.Peers) == 3
	})
	cur, _ := n.Epoch()
	for _, p := range cur.Peers {
		if want := map[string]float64{"p1": 1, "p2": 2, "p3": 1}[p.ID]; p.Weight != want {
			t.Errorf("epoch %d: %s weight %g, want %g", cur.Number, p.ID, p.Weight, want)
		}
	}
	if n.View().EpochNumber() != cur.Number {
		t.Errorf("view on epoch %d, want %d", n.View().EpochNumber(), cur.Number)
	}
}

// TestGossipCannotTakeHostedID: a gossip member under a hosted member's
// ID does not replace it in the host's view.
func TestGossipCannotTakeHostedID(t *testing.T) {
	host := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	hostPeer(t, host, "p1", &metaBox{m: NodeMeta{Zone: "hosted"}}, nil)
	other := startNode(t, testConfig("p1", RolePeer, &metaBox{m: NodeMeta{Zone: "gossip"}}, host.Addr()))
	eventually(t, "the other node sees the host", func() bool { return stateOf(other, "gw") == StateAlive })
	if m, _ := host.Member("p1"); m.Zone != "hosted" || m.Addr != "" || m.State != StateAlive {
		t.Fatalf("p1 = %+v; want the hosted member", m)
	}
}

// TestHostedMembersGossiped: another node learns of a node's hosted
// members from the stats messages their host gossips: their meta and
// stats, their stop, and their death with their host.
func TestHostedMembersGossiped(t *testing.T) {
	host := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	boxes := []*metaBox{{m: NodeMeta{APIAddr: "127.0.0.1:1", Zone: "z1"}}, {m: NodeMeta{APIAddr: "127.0.0.1:2"}}}
	p1 := hostPeer(t, host, "p1", boxes[0], func() Stats { return Stats{Objects: 5} })
	hostPeer(t, host, "p2", boxes[1], nil)
	other := startNode(t, testConfig("gw2", RoleGateway, &metaBox{}, host.Addr()))

	seen := func(id string) Member { m, _ := other.Member(id); return m }
	cases := []struct {
		name string
		do   func() error
		want func() bool
	}{
		{"meta and stats arrive", func() error { return nil }, func() bool {
			m := seen("p1")
			return m.State == StateAlive && m.Host == "gw" && m.Addr == "" && m.Zone == "z1" &&
				m.APIAddr == "127.0.0.1:1" && m.Stats.Objects == 5 && seen("p2").State == StateAlive &&
				slices.Equal(other.View().Peers(), []meta.PeerID{"p1", "p2"})
		}},
		{"meta update", func() error {
			boxes[0].set(func(m *NodeMeta) { m.Zone = "z9" })
			return p1.UpdateMeta(context.Background())
		}, func() bool { return seen("p1").Zone == "z9" }},
		{"stop", p1.Close, func() bool { return seen("p1").State == StateDead && seen("p2").State == StateAlive }},
		{"host dies", host.Close, func() bool { return seen("p2").State == StateDead }},
	}
	for _, c := range cases {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		eventually(t, c.name, c.want)
	}
	if got := other.View().Peers(); !slices.Equal(got, []meta.PeerID{"p1", "p2"}) {
		t.Fatalf("ring %v: dead hosted members must stay on it", got)
	}
}
