package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"

	"tessera/gateway"
	"tessera/meta"
	"tessera/storage"
)

// adminWidth is the shards per object of TestAdminCommands, whose every
// code (2+1 and MIRROR 1+2) is as wide as its three peers. Its join
// (three peers to four) and decommission (four to three) then move at
// most one shard of any object: the data mover rebuilds moved shards
// from the ones that stay, so a layout change moving more than M shards
// of an object at once would stall it, which is not what this test is
// about.
const adminWidth = 3

// TestAdminCommands drives `tessera admin` against a cluster of separate
// gateway and peer processes (EC 2+1 over three peers), parsing every
// --json answer: status and layout name the peers by the IDs in their
// directories with the epoch they persisted; info counts what was
// written; heal rebuilds shard files deleted from a stopped peer, only
// under the prefix it was given; a scrub pass then finds nothing; in
// manual layout mode a fourth peer waits as a pending join until layout
// apply; and a peer decommissioned by its ID leaves the ring with every
// object moved off it.
func TestAdminCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five tessera processes; run without -short")
	}
	c := newProcCluster(t)
	gw := c.startGateway("--ec", "2+1", "--storage-class", "MIRROR=1+2")
	for range adminWidth {
		c.startPeer()
	}
	c.waitAlive(adminWidth)
	c.waitEpoch(adminWidth)
	a := &adminRunner{t: t, c: c, gw: gw}
	checkStatus(t, a, c.peers)
	checkLayout(t, a, c.peers)

	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	makeBucketSoon(t, mc, "adm")
	set, bytesWritten := writeAdminObjects(t, mc)
	checkInfo(t, a, mc, len(set.live), bytesWritten)

	checkHeal(t, a, set)
	var sc gateway.ScrubReply
	a.ok(&sc, "scrub", "--wait", "2m")
	for _, p := range sc.Peers {
		if p.Report == nil || p.Report.Last == nil || p.Report.Last.Corrupt != 0 || p.Report.Pending != 0 {
			t.Errorf("scrub after the heals: peer %s reports %+v", p.Peer, p.Report)
		}
	}
	if len(sc.Peers) != adminWidth {
		t.Errorf("scrub reached %d peers, want %d", len(sc.Peers), adminWidth)
	}

	checkManualLayout(t, a, c)
	checkDecommission(t, a, c, set)
	set.verify(context.Background(), t, mc)
}

// adminRunner runs `tessera admin ... --json` against one gateway.
type adminRunner struct {
	t  *testing.T
	c  *procCluster
	gw *proc
}

// run decodes the command's JSON answer into out; the error carries its
// stderr.
func (a *adminRunner) run(out any, args ...string) error {
	args = append(append([]string{"admin"}, args...), "--endpoint", a.gw.api, "--json")
	cmd := exec.Command(a.c.bin, args...)
	cmd.Env = a.c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("tessera %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	// A field the answer omits must not keep an earlier answer's value.
	v := reflect.ValueOf(out).Elem()
	v.Set(reflect.Zero(v.Type()))
	if err := json.Unmarshal(stdout, out); err != nil {
		return fmt.Errorf("tessera %s: decode %q: %v", strings.Join(args, " "), stdout, err)
	}
	return nil
}

// ok is run that must succeed.
func (a *adminRunner) ok(out any, args ...string) {
	a.t.Helper()
	if err := a.run(out, args...); err != nil {
		a.t.Fatal(err)
	}
}

// checkStatus: every peer by the ID in its directory, alive, with the
// capacity and vnodes of the epoch they persisted.
func checkStatus(t *testing.T, a *adminRunner, peers []*proc) {
	t.Helper()
	e := peerEpoch(peers[0])
	var st gateway.ClusterStatus
	a.ok(&st, "status")
	if st.Ring.Epoch != e.Number || st.Ring.Mode != gateway.LayoutAuto || st.Ring.Peers != adminWidth || st.Code != "2+1" || st.Version == "" {
		t.Fatalf("status ring %+v (code %s, version %q), peers persisted epoch %d", st.Ring, st.Code, st.Version, e.Number)
	}
	want := map[string]int{}
	sum := 0
	for _, p := range e.Peers {
		want[p.ID] = p.Vnodes
		sum += p.Vnodes
	}
	seen := 0
	for _, n := range st.Nodes {
		switch n.Role {
		case "gateway":
			if n.ID != st.Gateway || n.Address != a.gw.api || n.State != "alive" {
				t.Errorf("status: gateway %+v", n)
			}
		case "peer":
			seen++
			if v, ok := want[n.ID]; !ok || v != n.Vnodes || n.State != "alive" || n.CapacityBytes == 0 || n.FreeBytes > n.CapacityBytes {
				t.Errorf("status: peer %+v; the epoch gives it %d vnodes (listed %v)", n, v, ok)
			}
		}
	}
	ids := peerIDs(t, peers)
	for id := range want {
		if !slices.Contains(ids, id) {
			t.Errorf("epoch names %s, which no peer directory holds (%v)", id, ids)
		}
	}
	if seen != adminWidth || st.Ring.Vnodes != sum {
		t.Fatalf("status lists %d peers and %d vnodes; the epoch has %d and %d", seen, st.Ring.Vnodes, adminWidth, sum)
	}
}

// checkLayout: per peer the epoch's vnodes, shares and weights that sum
// to one, P = s/w, and nothing pending.
func checkLayout(t *testing.T, a *adminRunner, peers []*proc) {
	t.Helper()
	e := peerEpoch(peers[0])
	var lay gateway.LayoutReply
	a.ok(&lay, "layout")
	if lay.Epoch != e.Number || lay.Pending != nil || len(lay.Peers) != len(e.Peers) {
		t.Fatalf("layout epoch %d, %d peers, pending %+v; persisted epoch %d of %d peers", lay.Epoch, len(lay.Peers), lay.Pending, e.Number, len(e.Peers))
	}
	var share, weight float64
	for i, p := range lay.Peers {
		ep := e.Peers[i] // both sorted by ID
		if p.ID != ep.ID || p.Vnodes != ep.Vnodes || p.Capacity != ep.Weight || p.P == nil || math.Abs(*p.P-p.Share/p.Weight) > 1e-9 {
			t.Errorf("layout peer %+v, epoch entry %+v", p, ep)
		}
		share, weight = share+p.Share, weight+p.Weight
	}
	if math.Abs(share-1) > 1e-9 || math.Abs(weight-1) > 1e-9 {
		t.Fatalf("shares sum to %v, weights to %v", share, weight)
	}
}

func peerIDs(t *testing.T, peers []*proc) []string {
	var ids []string
	for _, p := range peers {
		ids = append(ids, peerID(t, p))
	}
	return ids
}

// writeAdminObjects writes keys under heal/ and rest/ of every size the
// store keeps differently, one in the MIRROR class, and a CORS rule.
func writeAdminObjects(t *testing.T, mc *minio.Client) (*objectSet, int64) {
	t.Helper()
	ctx := context.Background()
	set := newObjectSet("adm")
	var total int64
	for i := range 8 {
		set.put(ctx, t, mc, fmt.Sprintf("heal/%02d", i), int64(i))
		set.put(ctx, t, mc, fmt.Sprintf("rest/%02d", i), int64(i))
		total += 2 * int64(clusterSizes[i%len(clusterSizes)])
	}
	data := payload(99, 200<<10)
	if _, err := mc.PutObject(ctx, "adm", "mirror/one", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{StorageClass: "MIRROR"}); err != nil {
		t.Fatal(err)
	}
	set.live["mirror/one"] = sha256.Sum256(data)
	total += int64(len(data))
	rules := cors.NewConfig([]cors.Rule{{AllowedMethod: []string{"GET"}, AllowedOrigin: []string{"https://example.com"}}})
	if err := mc.SetBucketCors(ctx, "adm", rules); err != nil {
		t.Fatal(err)
	}
	return set, total
}

// checkInfo: the bucket's counts per class with their codes, and its CORS
// rule.
func checkInfo(t *testing.T, a *adminRunner, mc *minio.Client, objects int, total int64) {
	t.Helper()
	var rep gateway.BucketReport
	a.ok(&rep, "info", "adm")
	var mirror, standard gateway.ClassUsage
	for _, cu := range rep.Classes {
		switch cu.Class {
		case "MIRROR":
			mirror = cu
		case "STANDARD":
			standard = cu
		}
	}
	if rep.Objects != int64(objects) || rep.Bytes != total || len(rep.Classes) != 2 ||
		mirror != (gateway.ClassUsage{Class: "MIRROR", Code: "1+2", Objects: 1, Bytes: 200 << 10}) ||
		standard.Code != "2+1" || standard.Objects != int64(objects-1) {
		t.Fatalf("info: %+v; wrote %d objects of %d bytes", rep, objects, total)
	}
	if rep.CORSRules != 1 || !strings.Contains(rep.CORS, "https://example.com") || rep.Versioning != "off" {
		t.Fatalf("info configuration: %+v", rep)
	}
	if err := a.run(&rep, "info", "no-such-bucket"); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("info of a missing bucket: %v", err)
	}
}

// checkHeal deletes every shard file of the bucket from a stopped peer.
// A heal of heal/ rebuilds exactly that prefix's lost shards; rest/ stays
// short until a heal of the whole bucket.
func checkHeal(t *testing.T, a *adminRunner, set *objectSet) {
	t.Helper()
	victim := a.c.peers[0]
	a.c.stop(victim)
	a.c.waitAlive(adminWidth - 1)
	lost := map[string]bool{} // keys whose shard on the victim lost its files
	for key := range set.live {
		if _, files, err := storage.Inspect(victim.dir, "adm", key); err == nil && len(files) > 0 {
			lost[key] = true
		}
	}
	removed := removeShardFiles(t, filepath.Join(victim.dir, "buckets", "adm"))
	a.c.start(victim)
	a.c.waitAlive(adminWidth)
	waitListening(t, victim)
	underHeal := 0
	for key := range lost {
		if strings.HasPrefix(key, "heal/") {
			underHeal++
		}
	}
	if underHeal == 0 || underHeal == len(lost) || removed < len(lost) {
		t.Fatalf("removed %d shard files of %d objects, %d under heal/: the test covers nothing", removed, len(lost), underHeal)
	}

	var st gateway.HealStatus
	a.ok(&st, "heal", "adm/heal/", "--wait", "2m")
	if st.Finished == nil || st.Objects != 8 || st.Repaired != int64(underHeal) || st.Shards != int64(underHeal) || st.Failed != 0 {
		t.Fatalf("heal adm/heal/: %+v; %d objects under it lost a shard", st, underHeal)
	}
	for key := range lost {
		msg := shardsComplete(a.c.peers, "adm", key, adminWidth)
		if strings.HasPrefix(key, "heal/") && msg != "" {
			t.Errorf("after heal adm/heal/: %s", msg)
		}
		if !strings.HasPrefix(key, "heal/") && msg == "" {
			t.Errorf("heal adm/heal/ repaired %s, outside its prefix", key)
		}
	}
	a.ok(&st, "heal", "adm", "--wait", "2m")
	if st.Objects != int64(len(set.live)) || st.Repaired != int64(len(lost)-underHeal) || st.Failed != 0 {
		t.Fatalf("heal adm: %+v; %d objects outside heal/ lost a shard", st, len(lost)-underHeal)
	}
	for key := range set.live {
		if msg := shardsComplete(a.c.peers, "adm", key, adminWidth); msg != "" {
			t.Errorf("after heal adm: %s", msg)
		}
	}
}

// removeShardFiles deletes the shard files under dir and counts them.
func removeShardFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), "part.") {
			return err
		}
		n++
		return os.Remove(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkManualLayout: in manual mode a fourth peer is a pending join and
// no epoch is minted for it until layout apply.
func checkManualLayout(t *testing.T, a *adminRunner, c *procCluster) {
	t.Helper()
	before := peerEpoch(c.peers[0]).Number
	var lay gateway.LayoutReply
	a.ok(&lay, "layout", "mode", "manual")
	manual := lay.Epoch
	if lay.Mode != gateway.LayoutManual || manual <= before {
		t.Fatalf("layout mode manual: %+v", lay)
	}
	newcomer := c.startPeer()
	c.waitAlive(adminWidth + 1)
	id := peerID(t, newcomer)
	waitUntil(t, 30*time.Second, "the newcomer shows as a pending join", func() bool {
		if a.run(&lay, "layout") != nil || lay.Pending == nil {
			return false
		}
		return slices.ContainsFunc(lay.Pending.Peers, func(p gateway.PeerChange) bool { return p.ID == id && p.Kind == "join" })
	})
	time.Sleep(6 * time.Second) // three proposer intervals with the peer set still
	var st gateway.ClusterStatus
	a.ok(&st, "status")
	if st.Ring.Epoch != manual || st.Ring.PendingChanges == 0 || peerEpoch(c.peers[0]).Number != manual {
		t.Fatalf("manual mode: epoch %d (peer file %d), %d pending; the switch was epoch %d",
			st.Ring.Epoch, peerEpoch(c.peers[0]).Number, st.Ring.PendingChanges, manual)
	}
	a.ok(&lay, "layout", "apply")
	if lay.Epoch <= manual || lay.Mode != gateway.LayoutManual || lay.Pending != nil || !onRingWith(lay, id) {
		t.Fatalf("layout apply: %+v, pending %s", lay, pendingText(lay))
	}
	waitUntil(t, 60*time.Second, "every peer holds the applied epoch", func() bool {
		e, ok := epochSettled(c.peers, adminWidth+1)
		return ok && e.Number == lay.Epoch
	})
	a.ok(&lay, "layout", "mode", "auto")
	if lay.Mode != gateway.LayoutAuto {
		t.Fatalf("layout mode auto: %+v", lay)
	}
	if err := a.run(&lay, "layout", "apply"); err == nil || !strings.Contains(err.Error(), "automatic") {
		t.Fatalf("layout apply in automatic mode: %v", err)
	}
}

func onRingWith(lay gateway.LayoutReply, id string) bool {
	return slices.ContainsFunc(lay.Peers, func(p gateway.LayoutPeer) bool { return p.ID == id && p.Vnodes > 0 })
}

// checkDecommission drains one of the first peers by its ID: --wait
// returns once it is off the ring with no data moving, and by then it
// holds no object and the others hold every object whole.
func checkDecommission(t *testing.T, a *adminRunner, c *procCluster, set *objectSet) {
	t.Helper()
	victim := c.peers[1]
	id := peerID(t, victim)
	held := 0
	for key := range set.live {
		if _, _, err := storage.Inspect(victim.dir, "adm", key); err == nil {
			held++
		}
	}
	if held == 0 {
		t.Fatal("the peer to decommission holds nothing: the test would not see data move")
	}
	var none gateway.DecommissionReply
	if err := a.run(&none, "decommission", "no-such-peer"); err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("decommission of an unknown peer: %v (want the known IDs listed)", err)
	}
	before := peerEpoch(c.peers[0]).Number
	var lay gateway.LayoutReply
	a.ok(&lay, "decommission", id, "--wait", "3m")
	if lay.Epoch <= before || lay.Moving || slices.ContainsFunc(lay.Peers, func(p gateway.LayoutPeer) bool { return p.ID == id }) || len(lay.Peers) != adminWidth {
		t.Fatalf("decommission --wait returned %+v (epoch before %d)", lay, before)
	}
	rest := slices.DeleteFunc(slices.Clone(c.peers), func(p *proc) bool { return p == victim })
	for key := range set.live {
		if _, _, err := storage.Inspect(victim.dir, "adm", key); !errors.Is(err, meta.ErrNotFound) {
			t.Errorf("decommissioned peer still holds %s (%v)", key, err)
		}
		if msg := shardsComplete(rest, "adm", key, adminWidth); msg != "" {
			t.Errorf("after the decommission: %s", msg)
		}
	}
	// The gateway learns that the peer drains from its gossiped meta,
	// which may reach it after the peers had acted on it.
	var st gateway.ClusterStatus
	waitUntil(t, 30*time.Second, "status shows the peer draining, with no vnodes", func() bool {
		if a.run(&st, "status") != nil {
			return false
		}
		return slices.ContainsFunc(st.Nodes, func(n gateway.AdminNode) bool { return n.ID == id && n.Draining && n.Vnodes == 0 })
	})
	if st.Ring.Peers != adminWidth || st.Ring.Moving || st.Ring.Epoch != lay.Epoch {
		t.Errorf("status ring after the decommission: %+v", st.Ring)
	}
	t.Logf("peer %s held %d of %d objects; off the ring at epoch %d", id, held, len(set.live), lay.Epoch)
}

// pendingText spells out a layout's pending change for a failure message.
func pendingText(lay gateway.LayoutReply) string {
	if lay.Pending == nil {
		return "none"
	}
	var b strings.Builder
	for _, c := range lay.Pending.Peers {
		fmt.Fprintf(&b, "%s %s %+v -> %+v; ", c.ID, c.Kind, c.From, c.To)
	}
	return b.String()
}
