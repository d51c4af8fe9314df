package cluster

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestReconnectTargets: dead members are dialled (not left ones, not
// ones dead for longer than reconnectFor, never this node nor a hosted
// member), and the join addresses only while no other gossip member is
// alive.
func TestReconnectTargets(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name    string
		members []Member
		want    []string
	}{
		{"all alive", []Member{
			{NodeMeta: NodeMeta{ID: "self"}, State: StateDead, Addr: "self:1"},
			{NodeMeta: NodeMeta{ID: "a"}, State: StateAlive, Addr: "a:1"},
		}, nil},
		{"one dead, one left, one long dead", []Member{
			{NodeMeta: NodeMeta{ID: "a"}, State: StateAlive, Addr: "a:1"},
			{NodeMeta: NodeMeta{ID: "b"}, State: StateDead, Addr: "b:1"},
			{NodeMeta: NodeMeta{ID: "c"}, State: StateLeft, Addr: "c:1"},
			{NodeMeta: NodeMeta{ID: "d"}, State: StateDead, Addr: "d:1", Since: now.Add(-reconnectFor - time.Minute)},
		}, []string{"b:1"}},
		{"everyone dead: join addresses too", []Member{
			{NodeMeta: NodeMeta{ID: "b"}, State: StateDead, Addr: "b:1"},
			{NodeMeta: NodeMeta{ID: "c"}, State: StateLeft, Addr: "c:1"},
		}, []string{"b:1", "seed:1"}},
		{"alone", nil, []string{"seed:1"}},
		{"hosted members: neither dialled nor company", []Member{
			{NodeMeta: NodeMeta{ID: "h1"}, State: StateAlive},
			{NodeMeta: NodeMeta{ID: "h2"}, State: StateDead},
		}, []string{"seed:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &Node{cfg: Config{NodeID: "self", Join: []string{"seed:1"}}, reg: newRegistry()}
			for _, m := range c.members {
				n.reg.update(m.ID, func(Member, bool) Member { return m })
				if !m.Since.IsZero() {
					n.reg.mu.Lock()
					n.reg.members[m.ID] = m // update stamps Since with now
					n.reg.mu.Unlock()
				}
			}
			r := &reconnector{n: n}
			got := r.targets(now)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("targets %v, want %v", got, c.want)
			}
		})
	}
}

// TestReconnectAfterForgotten: a node restarts on its old address with
// no join address, after the other has declared it dead and memberlist
// has forgotten it. Memberlist alone would leave the two apart forever;
// the survivor's reconnect loop dials the old address and both see each
// other alive again.
func TestReconnectAfterForgotten(t *testing.T) {
	a := startNode(t, testConfig("a", RolePeer, &metaBox{}))
	bcfg := testConfig("b", RolePeer, &metaBox{}, a.Addr())
	b := startNode(t, bcfg)
	eventually(t, "a sees b alive", func() bool { return stateOf(a, "b") == StateAlive })
	addr := b.Addr()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a sees b dead", func() bool { return stateOf(a, "b") == StateDead })
	// Past GossipToTheDeadTime memberlist drops b from its tables.
	time.Sleep(2 * FastTiming().GossipToTheDeadTime)

	bcfg.BindAddr, bcfg.Join = addr, nil
	var b2 *Node
	for i := 0; ; i++ { // the port may take a moment to be free again
		var err error
		if b2, err = Start(context.Background(), bcfg); err == nil {
			break
		}
		if i == 50 {
			t.Fatalf("restart b on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() { _ = b2.Close() })
	eventually(t, "a sees b alive again", func() bool { return stateOf(a, "b") == StateAlive })
	eventually(t, "b sees a alive", func() bool { return stateOf(b2, "a") == StateAlive })
}
