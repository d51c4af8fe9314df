package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"tessera/internal/fulldisk"
)

// statusNode is what the test reads of a node in /api/status.
type statusNode struct {
	ID       string `json:"id"`
	Role     string `json:"role"`
	DiskFull bool   `json:"disk_full"`
}

// fullPeers lists the peers the gateway's /api/status reports disk full.
func fullPeers(t *testing.T, web, access, secret string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+web+"/api/status", nil)
	req.SetBasicAuth(access, secret)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET /api/status: %v", err)
	}
	defer resp.Body.Close()
	var st struct{ Nodes []statusNode }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("decode /api/status: %v", err)
	}
	var out []string
	for _, n := range st.Nodes {
		if n.DiskFull {
			out = append(out, n.ID)
		}
	}
	return out
}

// readiness is a node's /health/ready status code and body.
func readiness(t *testing.T, web string) (int, string) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://" + web + "/health/ready")
	if err != nil {
		t.Fatalf("GET /health/ready: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDiskFullPeer: one of six peer processes keeps its data on a 64 MiB
// tmpfs, which the test fills. The peer says so in its readiness, its
// gossip and the gateway's /api/status; writes at 4+2 still succeed on the
// other five, a 6+0 write, whose quorum needs the full peer, gets 507
// InsufficientStorage; once space returns every object written meanwhile
// is repaired onto the peer, and everything reads back byte-exact.
func TestDiskFullPeer(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts seven tessera processes; run without -short")
	}
	mnt := fulldisk.Mount(t, 64<<20)
	c := newProcCluster(t)
	gw := c.startGateway("--storage-class", "ALL=6+0")
	var full *proc
	for i := range 6 {
		p := c.newPeer("--web-address")
		if i == 4 {
			full = p
			p.dir, p.args[1] = filepath.Join(mnt, "peer"), filepath.Join(mnt, "peer")
		}
		c.start(p)
	}
	c.waitAlive(6)
	c.waitEpoch(6)
	fullID := peerID(t, full)
	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	ctx := context.Background()
	makeBucketSoon(t, mc, "full")
	set := newObjectSet("full")
	for i := range 8 {
		set.put(ctx, t, mc, fmt.Sprintf("before/%02d", i), int64(i))
	}

	fulldisk.Fill(t, filepath.Join(mnt, "filler"))
	filled := time.Now()
	waitUntil(t, 20*time.Second, "the full peer is not ready", func() bool {
		code, body := readiness(t, full.web)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "disk full")
	})
	waitFor(t, 20*time.Second, "/api/status shows the peer's disk full", func() error {
		if ids := fullPeers(t, gw.web, c.access, c.secret); len(ids) != 1 || ids[0] != fullID {
			return fmt.Errorf("peers full: %v, want only %s", ids, fullID)
		}
		return nil
	})
	t.Logf("disk full visible in readiness and /api/status %.1f s after filling", time.Since(filled).Seconds())
	if code, body := readiness(t, gw.web); code != http.StatusOK {
		t.Fatalf("gateway not ready with five peers of six taking writes: %d %s", code, body)
	}
	var during []string
	for i := range 8 {
		key := fmt.Sprintf("during/%02d", i)
		set.put(ctx, t, mc, key, int64(100+i))
		during = append(during, key)
	}
	data := payload(7, 300<<10)
	_, err := mc.PutObject(ctx, "full", "all-six", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{StorageClass: "ALL"})
	if er := minio.ToErrorResponse(err); er.StatusCode != http.StatusInsufficientStorage || er.Code != "InsufficientStorage" {
		t.Fatalf("6+0 PUT with one peer full: %v (status %d code %q), want 507 InsufficientStorage", err, er.StatusCode, er.Code)
	}
	if _, err := mc.StatObject(ctx, "full", "all-six", minio.StatObjectOptions{}); errCode(err) != "NoSuchKey" {
		t.Fatalf("the refused 6+0 PUT left something visible: %v", err)
	}

	if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	waitUntil(t, 30*time.Second, "the peer is ready again", func() bool {
		code, _ := readiness(t, full.web)
		return code == http.StatusOK
	})
	waitUntil(t, 30*time.Second, "/api/status shows no disk full", func() bool {
		return len(fullPeers(t, gw.web, c.access, c.secret)) == 0
	})
	t.Logf("room again in readiness and /api/status %.1f s after freeing", time.Since(freed).Seconds())
	var why string
	waitUntil(t, 120*time.Second, "every object written while full repaired onto the peer", func() bool {
		for _, key := range during {
			if why = shardsComplete(c.peers, "full", key, 6); why != "" {
				return false
			}
		}
		return true
	})
	t.Logf("repaired %.1f s after space returned", time.Since(freed).Seconds())
	if _, err := mc.PutObject(ctx, "full", "all-six", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{StorageClass: "ALL"}); err != nil {
		t.Fatalf("6+0 PUT once space returned: %v", err)
	}
	set.verify(ctx, t, mc)
}
