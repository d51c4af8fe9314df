package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/meta"
	"tessera/object"
)

// gossipLines counts log lines whose message starts with a prefix.
type gossipLines struct {
	prefix string
	n      atomic.Int64
}

func (h *gossipLines) Run(_ *zerolog.Event, _ zerolog.Level, msg string) {
	if strings.HasPrefix(msg, h.prefix) {
		h.n.Add(1)
	}
}

func startTestEmbedded(t *testing.T, log zerolog.Logger) *Embedded {
	t.Helper()
	cfg := DefaultEmbeddedConfig()
	cfg.Dirs = []string{t.TempDir()}
	cfg.Address, cfg.WebAddress = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger = log
	e, err := StartEmbedded(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

// The load of TestEmbeddedLoadKeepsPeersAlive. With a gossip member per
// peer on a two-core host, 16 writers beside 4 spinning goroutines for
// 10 s gave 73 false "member gone" lines, 8 beside 1 for 6 s gave 14, and
// 8 writers alone for 10 s none. One spinner keeps the test from
// starving the packages tested alongside it.
const (
	loadFor      = 8 * time.Second
	loadWriters  = 8
	loadSpinners = 1
)

// Under concurrent writes and reads, no in-process peer is ever taken for
// dead: their liveness is the process's, not a probe's that load can
// delay. With a gossip member per peer on loopback, a loaded process
// logged thousands of false "member gone" lines and left falsely dead
// peers out of writes.
func TestEmbeddedLoadKeepsPeersAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of load")
	}
	if raceEnabled {
		// Slowed by the detector, the load starves the timing-sensitive
		// packages tested alongside; the race-free build has the check.
		t.Skip("load test; not under the race detector")
	}
	gone := &gossipLines{prefix: "member gone"}
	e := startTestEmbedded(t, zerolog.New(io.Discard).Level(zerolog.InfoLevel).Hook(gone))
	g := e.Gateway()
	ch, unsubscribe := g.node.Subscribe()
	defer unsubscribe()
	var downs atomic.Int64
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for range ch {
			for _, m := range g.node.Peers() {
				if m.State != cluster.StateAlive {
					downs.Add(1)
				}
			}
		}
	}()

	ctx := context.Background()
	if err := g.layer.MakeBucket(ctx, "load"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("tessera "), 128<<10) // 1 MiB
	stop := time.Now().Add(loadFor)
	var wg sync.WaitGroup
	var ops, failed atomic.Int64
	// Spinning goroutines stand for the rest of a busy host: the
	// scheduler, not the network, is what delays a loopback probe.
	for range loadSpinners {
		wg.Go(func() {
			for x := 0; time.Now().Before(stop); x++ {
				if x%1_000_000 == 0 {
					x = 0
				}
			}
		})
	}
	for w := range loadWriters {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				key := fmt.Sprintf("w%d/%d", w, i%16)
				if _, err := g.layer.PutObject(ctx, "load", key, bytes.NewReader(body), int64(len(body)), object.PutOptions{}); err != nil {
					failed.Add(1)
					continue
				}
				err := g.layer.GetObject(ctx, "load", key, func(object.ObjectInfo) (io.Writer, int64, int64, error) {
					return io.Discard, 0, -1, nil
				})
				if err != nil {
					failed.Add(1)
				}
				ops.Add(1)
			}
		})
	}
	wg.Wait()
	unsubscribe()
	<-watched
	t.Logf("%d put+get rounds, %d failed calls", ops.Load(), failed.Load())
	if n := gone.n.Load(); n > 0 {
		t.Errorf("%d \"member gone\" lines under load, want none", n)
	}
	if n := downs.Load(); n > 0 {
		t.Errorf("peers seen not alive %d times under load, want never", n)
	}
	for _, m := range g.node.Peers() {
		if m.State != cluster.StateAlive {
			t.Errorf("peer %s %s after the load", m.ID, m.State)
		}
	}
	if failed.Load() > 0 {
		t.Errorf("%d calls failed", failed.Load())
	}
}

// The embedded peers are members of the gateway's one view: the status
// lists each with its state, API address and capacity, a drain asked
// over a peer's shard API reaches the view through its hosted member,
// and a stopped peer is dead at once yet stays on the ring.
func TestEmbeddedPeersInOneView(t *testing.T) {
	e := startTestEmbedded(t, zerolog.Nop())
	g := e.Gateway()
	ctx := context.Background()

	st := g.Status()
	var peers int
	for _, n := range st.Nodes {
		if n.Role != string(cluster.RolePeer) {
			continue
		}
		peers++
		if n.State != "alive" || n.Address == "" || n.CapacityBytes == 0 || n.Vnodes == 0 {
			t.Errorf("status lists %+v; want alive with its API address, capacity and vnodes", n)
		}
	}
	if peers != len(e.PeerDirs()) {
		t.Fatalf("status lists %d peers, want %d", peers, len(e.PeerDirs()))
	}
	if err := g.WaitPeers(ctx, len(e.PeerDirs())); err != nil {
		t.Fatal(err)
	}

	ids := g.view.Peers()
	drained := e.peers[0].ID()
	c, err := g.view.peer(meta.PeerID(drained))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(ctx); err != nil {
		t.Fatalf("drain over the shard API: %v", err)
	}
	if m, _ := g.node.Member(drained); !m.Draining {
		t.Errorf("%s drained, but the view has %+v", drained, m.NodeMeta)
	}
	if rep, err := c.ScrubReport(ctx, 1); err != nil {
		t.Errorf("scrub report over the shard API: %v (%+v)", err, rep)
	}

	stopped := e.peers[1].ID()
	if err := e.StopPeer(1); err != nil {
		t.Fatal(err)
	}
	if m, _ := g.node.Member(stopped); m.State != cluster.StateDead {
		t.Errorf("stopped peer %s is %s, want dead at once", stopped, m.State)
	}
	if g.view.Alive(meta.PeerID(stopped)) {
		t.Errorf("stopped peer %s still alive to writes", stopped)
	}
	if got := g.view.Peers(); len(got) != len(ids) {
		t.Errorf("ring %v after the stop, want %v: a crashed peer keeps its placements", got, ids)
	}
	for _, n := range g.Status().Nodes {
		if n.ID == stopped && n.State != "dead" {
			t.Errorf("status lists the stopped peer %s", n.State)
		}
	}

	// Stats arrive from the hosted members every second.
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, _ := g.node.Member(e.peers[2].ID())
		if !m.StatsAt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stats from %s", m.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A peer process elsewhere may still join the embedded server's gossip:
// the gateway's view then holds its hosted peers and the gossip one, and
// writes reach the newcomer over its shard API.
func TestEmbeddedAcceptsGossipPeer(t *testing.T) {
	e := startTestEmbedded(t, zerolog.Nop())
	g := e.Gateway()
	ctx := context.Background()
	p, err := StartPeer(ctx, PeerConfig{Dir: t.TempDir(), NewID: "remote", Address: "127.0.0.1:0", Bind: "127.0.0.1:0",
		Join: []string{g.GossipAddr()}, Secret: []byte(e.Credentials().ClusterSecret), Timing: cluster.FastTiming(),
		Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := g.WaitPeers(wctx, len(e.PeerDirs())+1); err != nil {
		t.Fatal(err)
	}
	if m, _ := g.node.Member("remote"); m.Addr == "" || m.APIAddr != p.APIAddr() {
		t.Fatalf("remote peer %+v; want its gossip and API addresses", m)
	}
	if err := g.layer.MakeBucket(ctx, "joined"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 256<<10)
	for i := 0; p.store.LiveObjects() == 0; i++ {
		if i == 200 {
			t.Fatal("200 writes and none placed a shard on the gossip peer")
		}
		if _, err := g.layer.PutObject(ctx, "joined", fmt.Sprint(i), bytes.NewReader(body), int64(len(body)), object.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A gateway process elsewhere may join the embedded server's gossip too:
// it learns of the hosted peers from the embedded gateway's gossip and
// reads what the embedded gateway wrote over their shard APIs.
func TestEmbeddedAcceptsGossipGateway(t *testing.T) {
	e := startTestEmbedded(t, zerolog.Nop())
	ctx := context.Background()
	gcfg := DefaultGatewayConfig()
	gcfg.Address, gcfg.WebAddress, gcfg.Bind = "127.0.0.1:0", "", "127.0.0.1:0"
	gcfg.Join, gcfg.Credentials = []string{e.Gateway().GossipAddr()}, e.Credentials()
	gcfg.Timing, gcfg.Logger = cluster.FastTiming(), zerolog.Nop()
	g, err := StartGateway(ctx, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := g.WaitPeers(wctx, len(e.PeerDirs())); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("y"), 300<<10)
	if err := e.Gateway().layer.MakeBucket(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Gateway().layer.PutObject(ctx, "shared", "k", bytes.NewReader(body), int64(len(body)), object.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	err = g.layer.GetObject(ctx, "shared", "k", func(object.ObjectInfo) (io.Writer, int64, int64, error) {
		return &got, 0, -1, nil
	})
	if err != nil || !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("read through the joined gateway: %d bytes, %v", got.Len(), err)
	}
	stopped := e.peers[0].ID()
	if err := e.StopPeer(0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for g.view.Alive(meta.PeerID(stopped)) {
		if time.Now().After(deadline) {
			t.Fatalf("the joined gateway still holds the stopped peer %s alive", stopped)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEmbeddedPeerAddressesPinned: --peer-address pins the peers' shard
// API ports, counting up from the one given, so admin calls and firewall
// rules can name them.
func TestEmbeddedPeerAddressesPinned(t *testing.T) {
	var e *Embedded
	var base int
	for try := 0; e == nil; try++ {
		base = freePort(t)
		cfg := DefaultEmbeddedConfig()
		cfg.Dirs = []string{t.TempDir()}
		cfg.Address, cfg.WebAddress = "127.0.0.1:0", "127.0.0.1:0"
		cfg.PeerAddress = fmt.Sprintf("127.0.0.1:%d", base)
		cfg.Logger = zerolog.Nop()
		var err error
		e, err = StartEmbedded(context.Background(), cfg)
		if err != nil && (try == 4 || !strings.Contains(err.Error(), "address already in use")) {
			t.Fatal(err)
		}
	}
	defer e.Close()
	for i, p := range e.peers {
		if want := fmt.Sprintf("127.0.0.1:%d", base+i); p.APIAddr() != want {
			t.Errorf("peer %d serves on %s, want %s", i+1, p.APIAddr(), want)
		}
	}
	if _, err := peerAddresses("127.0.0.1:65533", 6); err == nil {
		t.Error("six ports from 65533 accepted")
	}
}

// freePort returns a port that was free a moment ago, with room for six
// after it.
func freePort(t *testing.T) int {
	t.Helper()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p <= 65535-6 {
			return p
		}
	}
}
