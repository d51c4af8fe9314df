package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// partition cuts one process off loopback with iptables: everything its
// user sends is dropped (so its outgoing dials fail too, whatever their
// source port), and so is everything sent to its ports. The process must
// run as a user of its own (proc.uid). Rules carry a comment naming this
// test process, and heal (also run at cleanup) deletes exactly them.
type partition struct {
	t     testing.TB
	rules [][]string
}

func newPartition(t testing.TB, uid uint32, ports ...string) *partition {
	t.Helper()
	tag := fmt.Sprintf("tessera-e2e-%d", os.Getpid())
	p := &partition{t: t}
	p.rules = append(p.rules, []string{"OUTPUT", "-o", "lo", "-m", "owner", "--uid-owner", strconv.Itoa(int(uid)),
		"-m", "comment", "--comment", tag, "-j", "DROP"})
	for _, port := range ports {
		for _, proto := range []string{"tcp", "udp"} {
			p.rules = append(p.rules, []string{"INPUT", "-i", "lo", "-p", proto, "--dport", port,
				"-m", "comment", "--comment", tag, "-j", "DROP"})
		}
	}
	return p
}

func (p *partition) cut() {
	p.t.Helper()
	p.t.Cleanup(p.heal)
	for _, r := range p.rules {
		if out, err := exec.Command("iptables", append([]string{"-I"}, r...)...).CombinedOutput(); err != nil {
			p.t.Fatalf("iptables -I %v: %v: %s", r, err, out)
		}
	}
}

// heal deletes every rule cut inserted; deleting one not there fails
// harmlessly, so heal can run twice.
func (p *partition) heal() {
	for _, r := range p.rules {
		for exec.Command("iptables", append([]string{"-D"}, r...)...).Run() == nil {
		}
	}
}

// needIptables skips t unless this process can change iptables rules.
func needIptables(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("partitions are made with iptables, which needs root")
	}
	if err := exec.Command("iptables", "-S", "OUTPUT").Run(); err != nil {
		t.Skipf("iptables is not usable here: %v", err)
	}
}

// portOf is the port of a host:port.
func portOf(t testing.TB, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// memberCounts reads tessera_cluster_members from a node's /metrics:
// "role/state" → count, as that node sees the cluster.
func memberCounts(web string) (map[string]int, error) {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://" + web + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tessera_cluster_members{") {
			continue
		}
		labels, val, _ := strings.Cut(strings.TrimPrefix(line, "tessera_cluster_members{"), "} ")
		var role, state string
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch k {
			case "role":
				role = v
			case "state":
				state = v
			}
		}
		n, _ := strconv.ParseFloat(val, 64)
		out[role+"/"+state] = int(n)
	}
	return out, sc.Err()
}

// allAlive reports whether every node sees peers peers and gateways
// gateways alive and no member in any other state; the first node that
// does not is described.
func allAlive(nodes []*proc, peers, gateways int) (bool, string) {
	for _, n := range nodes {
		counts, err := memberCounts(n.web)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", n.name, err)
		}
		want := map[string]int{"peer/alive": peers, "gateway/alive": gateways}
		for k, v := range counts {
			if v != want[k] {
				return false, fmt.Sprintf("%s sees %v", n.name, counts)
			}
		}
		for k, v := range want {
			if counts[k] != v {
				return false, fmt.Sprintf("%s sees %v", n.name, counts)
			}
		}
	}
	return true, ""
}

// soakDuration is TESSERA_SOAK_<name> as a duration, else def (three
// times def in soak mode, TESSERA_SOAK set).
func soakDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv("TESSERA_SOAK_" + name)
	if v == "" && os.Getenv("TESSERA_SOAK") != "" {
		return 3 * def
	}
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("TESSERA_SOAK_%s=%q: %v", name, v, err)
	}
	return d
}

// TestPartitionHeals cuts one of six peer processes off for a while
// (TESSERA_SOAK_PARTITION, default 20 s, 60 s with TESSERA_SOAK) with
// writes going on, heals the partition, and requires every node to see
// every other alive within 15 s, then every acknowledged write to read
// back byte-exact.
func TestPartitionHeals(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts seven tessera processes and partitions one for 20 s; run without -short")
	}
	needIptables(t)
	cut := soakDuration(t, "PARTITION", 20*time.Second)
	c := newProcCluster(t)
	gw := c.startGateway()
	uid := uint32(50000 + os.Getpid()%10000)
	var victim *proc
	for i := range 6 {
		p := c.newPeer("--web-address")
		if i == 2 {
			victim = p
			c.ownBy(p, uid)
		}
		c.start(p)
	}
	nodes := append([]*proc{gw}, c.peers...)
	c.waitAlive(6)
	c.waitEpoch(6)
	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	ctx := context.Background()
	makeBucketSoon(t, mc, "part")
	set := newObjectSet("part")
	for i := range 12 {
		set.put(ctx, t, mc, fmt.Sprintf("before/%02d", i), int64(i))
	}

	part := newPartition(t, uid, portOf(t, victim.bind), portOf(t, victim.api), portOf(t, victim.web))
	part.cut()
	start := time.Now()
	waitUntil(t, 30*time.Second, "the gateway sees the cut-off peer dead", func() bool { return gw.alivePeers() == 5 })
	for i := 0; time.Since(start) < cut; i++ {
		set.put(ctx, t, mc, fmt.Sprintf("during/%03d", i), int64(100+i))
		time.Sleep(200 * time.Millisecond)
	}
	part.heal()
	healed := time.Now()
	t.Logf("partitioned %v; %d objects written", healed.Sub(start).Round(time.Second), len(set.live))
	var why string
	for {
		ok, w := allAlive(nodes, 6, 1)
		if ok {
			break
		}
		why = w
		if time.Since(healed) > 60*time.Second {
			t.Fatalf("still not alive everywhere 60 s after healing: %s", why)
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(healed)
	t.Logf("alive everywhere %.1f s after healing (last laggard: %s)", took.Seconds(), why)
	if took > 15*time.Second {
		t.Errorf("alive everywhere only %.1f s after healing, want within 15 s", took.Seconds())
	}
	for i := range 6 {
		set.put(ctx, t, mc, fmt.Sprintf("after/%02d", i), int64(900+i))
	}
	set.verify(ctx, t, mc)
}

// newPeer is startPeer without the start, so the caller can adjust p
// first; extra flags are added, and "--web-address" alone gets a free
// address.
func (c *procCluster) newPeer(extra ...string) *proc {
	c.t.Helper()
	i := len(c.peers) + 1
	p := &proc{name: fmt.Sprintf("peer%d", i), dir: filepath.Join(c.root, fmt.Sprintf("peer%d", i)), api: freeAddr(c.t), bind: freeAddr(c.t)}
	p.args = []string{"peer", p.dir, "--address", p.api, "--bind", p.bind, "--join", c.gws[0].bind,
		"--gossip-timing", "lan", "--log-format", "json", "--log-level", "info"}
	for _, e := range extra {
		if e == "--web-address" {
			p.web = freeAddr(c.t)
			p.args = append(p.args, e, p.web)
			continue
		}
		p.args = append(p.args, e)
	}
	p.log = filepath.Join(c.root, p.name+".log")
	c.peers = append(c.peers, p)
	return p
}

// ownBy makes p run as uid, with its directory and the binary reachable.
func (c *procCluster) ownBy(p *proc, uid uint32) {
	c.t.Helper()
	for _, d := range []string{filepath.Dir(c.root), c.root, filepath.Dir(c.bin)} {
		if err := os.Chmod(d, 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Chown(p.dir, int(uid), int(uid)); err != nil {
		c.t.Fatal(err)
	}
	p.uid = uid
}
