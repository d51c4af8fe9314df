package cluster

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var testSecret = []byte("test cluster secret")

// metaBox is a mutable NodeMeta source for a test node.
type metaBox struct {
	mu sync.Mutex
	m  NodeMeta
}

func (b *metaBox) get() NodeMeta {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m
}

func (b *metaBox) set(f func(*NodeMeta)) {
	b.mu.Lock()
	f(&b.m)
	b.mu.Unlock()
}

func testConfig(id string, role Role, box *metaBox, join ...string) Config {
	return Config{
		NodeID: id, Role: role, BindAddr: "127.0.0.1:0", Join: join,
		Secret: testSecret, Meta: box.get, Logger: zerolog.Nop(), Timing: FastTiming(),
	}
}

func startNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start %s: %v", cfg.NodeID, err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// eventually polls cond until it holds or 10 s pass (generous: the test
// machine may be loaded).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stateOf(n *Node, id string) State {
	m, ok := n.Member(id)
	if !ok {
		return -1
	}
	return m.State
}

func TestClusterConverges(t *testing.T) {
	want := map[string]NodeMeta{
		"peer-1": {ID: "peer-1", Role: RolePeer, APIAddr: "127.0.0.1:7001", Zone: "a", Capacity: 1000, Free: 500},
		"peer-2": {ID: "peer-2", Role: RolePeer, APIAddr: "127.0.0.1:7002", Zone: "b", Capacity: 2000, Free: 10},
		"peer-3": {ID: "peer-3", Role: RolePeer, APIAddr: "127.0.0.1:7003", Zone: "a", Capacity: 3000},
		"gw-1":   {ID: "gw-1", Role: RoleGateway, APIAddr: "127.0.0.1:9000"},
	}
	var nodes []*Node
	for _, id := range []string{"peer-1", "peer-2", "peer-3", "gw-1"} {
		// ID and Role in the box are wrong on purpose: the Config's win.
		m := want[id]
		m.ID, m.Role = "spoofed", "admin"
		var join []string
		if len(nodes) > 0 {
			join = []string{nodes[0].Addr()}
		}
		nodes = append(nodes, startNode(t, testConfig(id, want[id].Role, &metaBox{m: m}, join...)))
	}
	for _, n := range nodes {
		if _, port, err := net.SplitHostPort(n.Addr()); err != nil || port == "0" {
			t.Fatalf("%s: Addr %q", n.ID(), n.Addr())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := n.WaitPeers(ctx, 3); err != nil {
			t.Fatalf("%s: %v", n.ID(), err)
		}
		cancel()
	}
	for _, n := range nodes {
		eventually(t, n.ID()+" sees all members with their meta", func() bool {
			ms := n.Members()
			if len(ms) != len(want) {
				return false
			}
			for _, m := range ms {
				if m.State != StateAlive || m.NodeMeta != want[m.ID] || m.Addr == "" {
					return false
				}
			}
			return true
		})
		var peers []string
		for _, m := range n.Peers() {
			peers = append(peers, m.ID)
		}
		if !slices.Equal(peers, []string{"peer-1", "peer-2", "peer-3"}) {
			t.Fatalf("%s: Peers = %v", n.ID(), peers)
		}
	}
	// Every node computes the same placement.
	for _, key := range []string{"a", "photos/cat.jpg", "x/y/z"} {
		ref, err := nodes[0].View().Placement("bkt", key, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes[1:] {
			got, err := n.View().Placement("bkt", key, 3)
			if err != nil || !slices.Equal(got, ref) {
				t.Fatalf("%s: placement of %q = %v, %v; want %v", n.ID(), key, got, err, ref)
			}
		}
	}
}

func TestWrongSecretCannotJoin(t *testing.T) {
	seed := startNode(t, testConfig("seed", RolePeer, &metaBox{}))

	bad := testConfig("intruder", RolePeer, &metaBox{}, seed.Addr())
	bad.Secret = []byte("another secret")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if n, err := Start(ctx, bad); err == nil {
		_ = n.Close()
		t.Fatal("node with the wrong secret joined")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a join that never succeeds", err)
	}

	// The same join with the right secret works, so the secret was the
	// only difference.
	good := startNode(t, testConfig("friend", RolePeer, &metaBox{}, seed.Addr()))
	eventually(t, "seed sees friend", func() bool { return stateOf(seed, "friend") == StateAlive })
	if _, ok := seed.Member("intruder"); ok {
		t.Fatal("seed lists the intruder")
	}
	if _, ok := good.Member("intruder"); ok {
		t.Fatal("friend lists the intruder")
	}
}

func TestDeadPeerStaysListed(t *testing.T) {
	a := startNode(t, testConfig("a", RolePeer, &metaBox{}))
	b := startNode(t, testConfig("b", RolePeer, &metaBox{}, a.Addr()))
	c := startNode(t, testConfig("c", RolePeer, &metaBox{m: NodeMeta{Zone: "zc"}}, a.Addr()))
	eventually(t, "all alive", func() bool { return stateOf(a, "c") == StateAlive && stateOf(b, "c") == StateAlive })
	oldAddr := c.Addr()

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*Node{a, b} {
		eventually(t, n.ID()+" sees c dead", func() bool { return stateOf(n, "c") == StateDead })
	}
	// Outlive memberlist's memory of the dead node; the registry keeps it.
	time.Sleep(FastTiming().GossipToTheDeadTime + 500*time.Millisecond)
	for _, n := range []*Node{a, b} {
		m, ok := n.Member("c")
		if !ok || m.State != StateDead || m.Zone != "zc" {
			t.Fatalf("%s: c = %+v, %v; want dead with its meta", n.ID(), m, ok)
		}
		if got := n.View().Peers(); len(got) != 3 {
			t.Fatalf("%s: ring peers %v, want a dead peer kept", n.ID(), got)
		}
		if _, err := n.View().Placement("b", "k", 3); err != nil {
			t.Fatalf("%s: placement with a dead peer: %v", n.ID(), err)
		}
	}

	// c restarts on a new port under the same name and is alive again.
	c2 := startNode(t, testConfig("c", RolePeer, &metaBox{m: NodeMeta{Zone: "zc"}}, a.Addr()))
	for _, n := range []*Node{a, b} {
		eventually(t, n.ID()+" sees c back", func() bool {
			m, _ := n.Member("c")
			return m.State == StateAlive && m.Addr == c2.Addr() && m.Addr != oldAddr
		})
	}
}

func TestLeaveIsSeenAsLeft(t *testing.T) {
	a := startNode(t, testConfig("a", RolePeer, &metaBox{}))
	b := startNode(t, testConfig("b", RoleGateway, &metaBox{}, a.Addr()))
	eventually(t, "a sees b", func() bool { return stateOf(a, "b") == StateAlive })
	if err := b.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a sees b left", func() bool { return stateOf(a, "b") == StateLeft })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if len(a.Members()) != 2 {
		t.Fatalf("members %v, want the departed gateway still listed", a.Members())
	}
	if len(a.Peers()) != 1 {
		t.Fatalf("peers %v, want only a", a.Peers())
	}
}

func TestMetaUpdatePropagates(t *testing.T) {
	box := &metaBox{m: NodeMeta{Capacity: 100, Free: 100}}
	a := startNode(t, testConfig("a", RolePeer, box))
	b := startNode(t, testConfig("b", RolePeer, &metaBox{}, a.Addr()))
	eventually(t, "b sees a", func() bool { m, _ := b.Member("a"); return m.Free == 100 })
	ringBefore := b.View().Ring()

	ch, cancel := b.Subscribe()
	defer cancel()
	box.set(func(m *NodeMeta) { m.Free = 42 })
	ctx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	if err := a.UpdateMeta(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no membership notification")
	}
	eventually(t, "b sees the new free bytes", func() bool { m, _ := b.Member("a"); return m.Free == 42 })
	if m, _ := a.Member("a"); m.Free != 42 {
		t.Fatalf("a's own record: %+v", m)
	}
	if b.View().Ring() != ringBefore {
		t.Fatal("a free-bytes change rebuilt the ring")
	}
}

func TestMetaTooLarge(t *testing.T) {
	huge := NodeMeta{APIAddr: strings.Repeat("x", MetaMaxSize)}
	if n, err := Start(context.Background(), testConfig("a", RolePeer, &metaBox{m: huge})); !errors.Is(err, ErrMetaTooLarge) {
		if n != nil {
			_ = n.Close()
		}
		t.Fatalf("Start with oversized meta: err = %v", err)
	}

	box := &metaBox{m: NodeMeta{Zone: "z1"}}
	a := startNode(t, testConfig("a", RolePeer, box))
	b := startNode(t, testConfig("b", RolePeer, &metaBox{}, a.Addr()))
	eventually(t, "b sees a", func() bool { return stateOf(b, "a") == StateAlive })
	box.set(func(m *NodeMeta) { *m = huge })
	if err := a.UpdateMeta(context.Background()); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("UpdateMeta: err = %v", err)
	}
	// memberlist itself asks for meta when it refutes suspicion; the
	// delegate falls back to the last meta that fit.
	if got, err := DecodeMeta(a.meta.NodeMeta(MetaMaxSize)); err != nil || got.Zone != "z1" {
		t.Fatalf("fallback meta = %+v, %v", got, err)
	}
	if m, _ := b.Member("a"); m.Zone != "z1" {
		t.Fatalf("b sees %+v", m)
	}
}

func TestClosedNode(t *testing.T) {
	n := startNode(t, testConfig("a", RolePeer, &metaBox{}))
	ch, _ := n.Subscribe()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("subscription not closed")
	}
	if err := n.Leave(time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("Leave: %v", err)
	}
	if err := n.UpdateMeta(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("UpdateMeta: %v", err)
	}
	if err := n.WaitPeers(context.Background(), 2); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitPeers: %v", err)
	}
	if _, ok := <-func() <-chan struct{} { c, _ := n.Subscribe(); return c }(); ok {
		t.Fatal("subscription after close not closed")
	}
}

func TestWaitPeersHonoursContext(t *testing.T) {
	n := startNode(t, testConfig("a", RolePeer, &metaBox{}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := n.WaitPeers(ctx, 1); err != nil {
		t.Fatalf("self counts as a peer: %v", err)
	}
	if err := n.WaitPeers(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}
