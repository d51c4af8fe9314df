package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// procCluster is a cluster of separate `tessera peer` and `tessera
// gateway` processes on loopback, for tests that kill -9 and restart them.
type procCluster struct {
	t      testing.TB
	bin    string
	root   string
	env    []string
	access string
	secret string
	peers  []*proc
	gws    []*proc
}

// proc is one tessera process; args are kept so it can be restarted on
// the same directory and ports.
type proc struct {
	name string
	args []string
	dir  string // peers: data directory
	api  string // peers: shard API; gateways: S3 endpoint
	web  string
	bind string
	log  string
	uid  uint32   // run as this user when non-zero (to single it out in iptables rules)
	env  []string // added to the cluster's environment (a scenario's per-process settings)

	mu      sync.Mutex
	cmd     *exec.Cmd
	waited  chan struct{}
	members map[string]string // gateways: member → "alive"/"gone", from its log
	epochN  int               // gateways: peers in the last epoch adopted, from its log
	ids     map[string]bool   // gateways: members with role peer
}

// handedOut holds every address freeAddr returned in this test binary.
// The kernel may offer a just-closed port again before the process it was
// meant for has bound it, so one is never handed out twice.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// freeAddr returns a loopback host:port that was free a moment ago and was
// not returned before. A fixed port lets a killed process come back on the
// same address, which gossip requires to re-admit it under its name at once.
// Ports come from below the kernel's ephemeral range (32768 and up by
// default), so the source port of some outgoing connection cannot take
// one between this check and the process binding it; the port is free for
// UDP too, which gossip binds beside TCP.
func freeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 1000 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+mathrand.IntN(12000))
		if handedOut.addrs[addr] {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		pc, err := net.ListenPacket("udp", addr)
		ln.Close()
		if err != nil {
			continue
		}
		pc.Close()
		handedOut.addrs[addr] = true
		return addr
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

func newProcCluster(t testing.TB) *procCluster {
	t.Helper()
	c := &procCluster{t: t, bin: tesseraBinary(t), root: t.TempDir(), access: "CLUSTERTESTKEY", secret: "cluster-test-secret-key"}
	c.env = append(os.Environ(),
		"TESSERA_ACCESS_KEY="+c.access, "TESSERA_SECRET_KEY="+c.secret,
		"TESSERA_CLUSTER_SECRET=cluster-test-gossip-secret")
	t.Cleanup(c.stopAll)
	return c
}

// startGateway starts a gateway joining the first one (none: it is the
// first node).
func (c *procCluster) startGateway(extra ...string) *proc {
	c.t.Helper()
	p := c.newGateway(extra...)
	c.start(p)
	return p
}

// startGatewayEnv is startGateway with env added to its environment.
func (c *procCluster) startGatewayEnv(env []string, extra ...string) *proc {
	c.t.Helper()
	p := c.newGateway(extra...)
	p.env = env
	c.start(p)
	return p
}

// procLogLevel is the cluster processes' log level: info, or
// TESSERA_LOG_LEVEL (debug, to see why a scenario failed).
func procLogLevel() string {
	if v := os.Getenv("TESSERA_LOG_LEVEL"); v != "" {
		return v
	}
	return "info"
}

// newGateway is startGateway without the start, so the caller can adjust
// p first (its environment, say).
func (c *procCluster) newGateway(extra ...string) *proc {
	c.t.Helper()
	p := &proc{name: fmt.Sprintf("gateway%d", len(c.gws)+1), api: freeAddr(c.t), web: freeAddr(c.t), bind: freeAddr(c.t),
		members: map[string]string{}, ids: map[string]bool{}}
	p.args = []string{"gateway", "--address", p.api, "--web-address", p.web, "--bind", p.bind,
		"--gossip-timing", "lan", "--scan-interval", "1s", "--scan-rate", "400", "--log-format", "json", "--log-level", procLogLevel()}
	if len(c.gws) > 0 {
		p.args = append(p.args, "--join", c.gws[0].bind)
	}
	p.args = append(p.args, extra...)
	p.log = filepath.Join(c.root, p.name+".log")
	c.gws = append(c.gws, p)
	return p
}

// startPeer starts a peer joining the first gateway.
func (c *procCluster) startPeer(extra ...string) *proc {
	c.t.Helper()
	i := len(c.peers) + 1
	p := &proc{name: fmt.Sprintf("peer%d", i), dir: filepath.Join(c.root, fmt.Sprintf("peer%d", i)), api: freeAddr(c.t), bind: freeAddr(c.t)}
	p.args = []string{"peer", p.dir, "--address", p.api, "--bind", p.bind, "--join", c.gws[0].bind,
		"--gossip-timing", "lan", "--log-format", "json", "--log-level", procLogLevel()}
	p.args = append(p.args, extra...)
	p.log = filepath.Join(c.root, p.name+".log")
	c.peers = append(c.peers, p)
	c.start(p)
	return p
}

// start runs p; a gateway's log is also parsed for membership events.
func (c *procCluster) start(p *proc) {
	c.t.Helper()
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, p.args...)
	cmd.Env = append(append([]string(nil), c.env...), p.env...)
	if p.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: p.uid, Gid: p.uid}}
	}
	var pw *io.PipeWriter
	if p.members != nil {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		cmd.Stderr = io.MultiWriter(logf, pw)
		go p.follow(pr)
	} else {
		cmd.Stderr = logf
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", p.name, err)
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		if pw != nil {
			pw.Close()
		}
		close(waited)
	}()
	p.mu.Lock()
	p.cmd, p.waited = cmd, waited
	p.mu.Unlock()
}

// follow records the gateway's view of membership from its JSON log.
func (p *proc) follow(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev struct {
			Message, Member, Role string
			Peers                 int
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Message == "ring epoch adopted" {
			p.mu.Lock()
			p.epochN = ev.Peers
			p.mu.Unlock()
		}
		if ev.Member == "" {
			continue
		}
		p.mu.Lock()
		switch ev.Message {
		case "member alive":
			p.members[ev.Member] = "alive"
			if ev.Role == "peer" {
				p.ids[ev.Member] = true
			}
		case "member gone":
			p.members[ev.Member] = "gone"
		}
		p.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// alivePeers is how many peers the gateway currently sees alive.
func (p *proc) alivePeers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for id := range p.ids {
		if p.members[id] == "alive" {
			n++
		}
	}
	return n
}

// waitAlive waits until every gateway sees n peers alive.
func (c *procCluster) waitAlive(n int) {
	c.t.Helper()
	for _, g := range c.gws {
		waitUntil(c.t, 60*time.Second, fmt.Sprintf("%s sees %d peers alive", g.name, n), func() bool { return g.alivePeers() == n })
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *procCluster) kill(p *proc) {
	c.t.Helper()
	p.mu.Lock()
	cmd, waited := p.cmd, p.waited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-waited
}

// waitServing waits until p accepts connections on its API address, and
// fails the test at once if p exits first: a restart that gossip has not
// yet noticed passes waitAlive before the process even opened its store.
func (c *procCluster) waitServing(p *proc) {
	c.t.Helper()
	p.mu.Lock()
	waited := p.waited
	p.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if conn, err := net.DialTimeout("tcp", p.api, time.Second); err == nil {
			conn.Close()
			return
		}
		select {
		case <-waited:
			c.t.Fatalf("%s exited before it served; see %s", p.name, p.log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s not serving on %s after 60s", p.name, p.api)
		}
	}
}

// signal sends sig to p, if running, and waits up to 15 s for it to exit.
func (c *procCluster) signal(p *proc, sig syscall.Signal) {
	p.mu.Lock()
	cmd, waited := p.cmd, p.waited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
	}
}

// stop asks a process to exit (SIGTERM), killing it if it lingers.
func (c *procCluster) stop(p *proc) {
	p.mu.Lock()
	cmd, waited := p.cmd, p.waited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-waited
	}
}

func (c *procCluster) stopAll() {
	for _, p := range c.gws {
		if c.t.Failed() && os.Getenv("TESSERA_KEEP_LOGS") != "" {
			c.signal(p, syscall.SIGQUIT) // its goroutines, into the kept log
		}
		c.stop(p)
	}
	for _, p := range c.peers {
		c.stop(p)
	}
	if c.t.Failed() {
		for _, p := range append(append([]*proc(nil), c.gws...), c.peers...) {
			c.t.Logf("---- tail of %s log:\n%s", p.name, tail(p.log, 300))
		}
		keepLogs(c.t, c.root)
	}
}

// keepLogs copies a failed cluster's logs into $TESSERA_KEEP_LOGS, when
// set, since the tails above seldom reach back to where a failure began.
func keepLogs(t testing.TB, root string) {
	dst := os.Getenv("TESSERA_KEEP_LOGS")
	if dst == "" {
		return
	}
	dir := filepath.Join(dst, strings.ReplaceAll(t.Name(), "/", "_"))
	logs, _ := filepath.Glob(filepath.Join(root, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err == nil && os.MkdirAll(dir, 0o755) == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(l)), b, 0o644)
		}
		if err != nil {
			t.Logf("keep %s: %v", l, err)
		}
	}
	t.Logf("logs kept in %s", dir)
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// makeBucketSoon creates bucket through mc, retrying while the cluster
// settles (a fresh cluster may not yet have enough peers for a quorum).
func makeBucketSoon(t testing.TB, mc *minio.Client, bucket string) {
	t.Helper()
	waitUntil(t, 30*time.Second, "bucket created", func() bool {
		return mc.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}) == nil
	})
}

func waitUntil(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	waitFor(t, d, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

// bootLoaded starts a gateway and n peers, waits until all are alive on a
// settled ring epoch naming them, creates bucket and writes count objects
// obj/000, obj/001, ... through the gateway.
func bootLoaded(t *testing.T, n int, bucket string, count int) (*procCluster, *minio.Client, *objectSet) {
	t.Helper()
	c := newProcCluster(t)
	gw := c.startGateway()
	for range n {
		c.startPeer()
	}
	c.waitAlive(n)
	c.waitEpoch(n)
	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	ctx := context.Background()
	makeBucketSoon(t, mc, bucket)
	set := newObjectSet(bucket)
	for i := range count {
		set.put(ctx, t, mc, fmt.Sprintf("obj/%03d", i), int64(i))
	}
	return c, mc, set
}

// startTwoGateways starts two gateways and six peers, waits until all are
// alive on a settled ring epoch, and returns the cluster, the first
// gateway and a client of each gateway.
func startTwoGateways(t *testing.T) (*procCluster, *proc, *minio.Client, *minio.Client) {
	return startTwoGatewaysEnv(t, nil, nil)
}

// startTwoGatewaysEnv is startTwoGateways with extra environment for each
// gateway process.
func startTwoGatewaysEnv(t *testing.T, envA, envB []string) (*procCluster, *proc, *minio.Client, *minio.Client) {
	t.Helper()
	c := newProcCluster(t)
	a := c.startGatewayEnv(envA)
	b := c.startGatewayEnv(envB)
	for range 6 {
		c.startPeer()
	}
	c.waitAlive(6)
	c.waitEpoch(6)
	ma, _ := newMinio(t, a.api, c.access, c.secret)
	mb, _ := newMinio(t, b.api, c.access, c.secret)
	return c, a, ma, mb
}
