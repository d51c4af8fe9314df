package cluster

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/meta"
)

func epochNode(t *testing.T, id string, capGiB uint64, file string, join ...string) *Node {
	t.Helper()
	box := &metaBox{m: NodeMeta{APIAddr: "127.0.0.1:1", Capacity: capGiB << 30}}
	cfg := testConfig(id, RolePeer, box, join...)
	cfg.Propose, cfg.ProposeInterval, cfg.EpochFile = true, 200*time.Millisecond, file
	return startNode(t, cfg)
}

// agreed returns the epoch every node holds, or 0 if they differ.
func agreed(nodes []*Node) uint64 {
	first, _ := nodes[0].Epoch()
	for _, n := range nodes[1:] {
		if cur, _ := n.Epoch(); cur.Number != first.Number || cur.Hash() != first.Hash() {
			return 0
		}
	}
	return first.Number
}

// Six peers of capacities 1,1,1,2,2,4: one proposer mints an epoch every
// node adopts, each peer's share of the ring is within 10% of its
// capacity fraction, and the epoch then stays put.
func TestEpochFollowsCapacity(t *testing.T) {
	caps := []uint64{1, 1, 1, 2, 2, 4}
	dir := t.TempDir()
	var nodes []*Node
	for i, c := range caps {
		var join []string
		if i > 0 {
			join = []string{nodes[0].Addr()}
		}
		nodes = append(nodes, epochNode(t, fmt.Sprintf("p%d", i), c, filepath.Join(dir, fmt.Sprintf("p%d.epoch", i)), join...))
	}
	gw := startNode(t, testConfig("gw", RoleGateway, &metaBox{}, nodes[0].Addr()))
	all := append([]*Node{gw}, nodes...)
	eventually(t, "all nodes agree on an epoch with six peers", func() bool {
		cur, _ := gw.Epoch()
		return agreed(all) > 0 && len(cur.Peers) == 6
	})
	settled := agreed(all)
	time.Sleep(time.Second) // five proposer intervals
	if e := agreed(all); e != settled {
		t.Fatalf("epoch moved from %d to %d with nothing changing", settled, e)
	}
	r := gw.View().Ring()
	for i, c := range caps {
		want := float64(c) / 11
		if s := r.Share(meta.PeerID(fmt.Sprintf("p%d", i))); math.Abs(s-want) > 0.1*want {
			t.Errorf("p%d: share %.4f, capacity fraction %.4f", i, s, want)
		}
	}
	cur, _ := nodes[3].Epoch()
	if st, ok := gw.Member("p3"); !ok || cur.Number != settled {
		t.Fatalf("member p3 %+v, epoch %d", st, cur.Number)
	}

	// A seventh peer joins: a new epoch places it, everywhere.
	nodes = append(nodes, epochNode(t, "p6", 2, "", nodes[0].Addr()))
	all = append(all, nodes[6])
	eventually(t, "the newcomer is on the ring everywhere", func() bool {
		cur, _ := gw.Epoch()
		return agreed(all) > settled && len(cur.Peers) == 7 && gw.View().Ring().Vnodes("p6") > 0
	})
	if older := gw.View().OlderRings(); len(older) == 0 || older[0].Vnodes("p6") != 0 {
		t.Fatal("previous ring not kept for reads during the move")
	}

	// The epoch survives a restart through its file.
	want, _ := nodes[2].Epoch()
	nodes[2].Close()
	n := newEpochs(filepath.Join(dir, "p2.epoch"), newRegistry(), nodes[0].log, func() int { return 1 })
	if got, _ := n.current(); got.Number != want.Number || got.Hash() != want.Hash() {
		t.Fatalf("reloaded epoch %d, want %d", got.Number, want.Number)
	}
}

func TestEpochOrdering(t *testing.T) {
	a := Epoch{Number: 2, Peers: []EpochPeer{{ID: "a", Weight: 1, Vnodes: 3}}}
	b := Epoch{Number: 2, Peers: []EpochPeer{{ID: "a", Weight: 1, Vnodes: 4}}}
	if a.newer(a) || (a.newer(b) == b.newer(a)) {
		t.Fatal("equal-number records must be totally ordered by hash")
	}
	if !(Epoch{Number: 3}).newer(a) || a.newer(Epoch{Number: 3}) {
		t.Fatal("higher number must win")
	}
}

func FuzzDecodeEpoch(f *testing.F) {
	good, _ := encodeEpoch(Epoch{Number: 4, Peers: []EpochPeer{{ID: "a", Weight: 2, Vnodes: 9}, {ID: "b", Weight: 1, Vnodes: 4}}})
	f.Add(good)
	f.Add([]byte{msgEpoch, '{', '}'})
	f.Add(append([]byte{msgEpoch}, `{"n":1,"p":[{"id":"b","v":1},{"id":"a","v":1}]}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEpoch(b)
		if err != nil {
			return
		}
		if _, err := e.Ring(); err != nil {
			t.Fatalf("accepted a record that builds no ring: %v", err)
		}
	})
}

// Records adopted at once leave the newest in the file, and none is
// current before it is on disk.
func TestEpochFileEndsAtNewest(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.epoch")
	e := newEpochs(file, newRegistry(), zerolog.Nop(), func() int { return 1 })
	var wg sync.WaitGroup
	for n := 1; n <= 20; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.adopt(Epoch{Number: uint64(n), Peers: []EpochPeer{{ID: "a", Weight: 1, Vnodes: n}}}, "test")
			if cur, _ := e.current(); cur.Number >= uint64(n) {
				if got, _ := newEpochs(file, newRegistry(), zerolog.Nop(), func() int { return 1 }).current(); got.Number < uint64(n) {
					t.Errorf("epoch %d current, file holds %d", cur.Number, got.Number)
				}
			}
		}()
	}
	wg.Wait()
	if got, _ := newEpochs(file, newRegistry(), zerolog.Nop(), func() int { return 1 }).current(); got.Number != 20 {
		t.Fatalf("file holds epoch %d, want 20", got.Number)
	}
}

// A peer whose join address does not answer yet sees only itself. It
// must not mint a layout of one peer while it waits: that epoch would
// reach the cluster once the join succeeds and narrow everyone's ring
// below the code. Once joined it waits a whole interval for gossip to
// bring the other peers before it mints anything.
func TestNoEpochBeforeJoin(t *testing.T) {
	const interval = 300 * time.Millisecond
	seedAddr := freeGossipAddr(t)
	started := make(chan *Node, 1)
	go func() {
		box := &metaBox{m: NodeMeta{APIAddr: "127.0.0.1:1", Capacity: 1 << 30}}
		cfg := testConfig("a", RolePeer, box, seedAddr)
		cfg.Propose, cfg.ProposeInterval = true, interval
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n, err := Start(ctx, cfg)
		if err != nil {
			t.Errorf("start a: %v", err)
		}
		started <- n
	}()
	time.Sleep(5 * interval) // with nobody to join
	cfg := testConfig("gw", RoleGateway, &metaBox{})
	cfg.BindAddr = seedAddr
	startNode(t, cfg)
	a := <-started
	if a == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = a.Close() })
	if cur, _ := a.Epoch(); cur.Number != 0 {
		t.Fatalf("epoch %d with %d peers minted before the join succeeded", cur.Number, len(cur.Peers))
	}
	eventually(t, "the joined peer mints the one-peer layout it now knows is the cluster", func() bool {
		cur, _ := a.Epoch()
		return cur.Number == 1 && len(cur.Peers) == 1
	})
}

// freeGossipAddr returns a loopback address whose port is free for TCP
// and UDP at the time of the call.
func freeGossipAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		u, err := net.ListenPacket("udp", addr)
		if err == nil {
			u.Close()
			return addr
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return ""
}
