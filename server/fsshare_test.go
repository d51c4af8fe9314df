package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
)

func TestFSShares(t *testing.T) {
	tmp := t.TempDir()
	other := "/proc/no-such-dir"
	tmpID, err := filesystemID(tmp)
	if err != nil {
		t.Fatal(err)
	}
	procID, err := filesystemID(other)
	if err != nil || procID == tmpID {
		t.Skipf("no second filesystem to tell apart (/proc: %v)", err)
	}
	cases := []struct {
		name string
		dirs []string
		want []int
	}{
		{"one", []string{tmp}, []int{1}},
		{"subdirs not made yet", []string{filepath.Join(tmp, "peer1"), filepath.Join(tmp, "peer2"), filepath.Join(tmp, "peer3")}, []int{3, 3, 3}},
		{"two filesystems", []string{filepath.Join(tmp, "a"), other, filepath.Join(tmp, "b")}, []int{2, 1, 2}},
	}
	for _, tc := range cases {
		got := fsShares(tc.dirs)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: fsShares = %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

// TestEmbeddedStatusFigures: the peers of one DIR share its disk, so
// each reports a sixth of it and together the disk once; their CPU is
// the process's, on the gateway's row only; the version is the one the
// server was given.
func TestEmbeddedStatusFigures(t *testing.T) {
	cfg := DefaultEmbeddedConfig()
	cfg.Dirs = []string{t.TempDir()}
	cfg.Address, cfg.WebAddress = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Logger, cfg.Version = zerolog.Nop(), "9.8.7-test"
	e, err := StartEmbedded(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	sp, err := e.peers[0].store.Space()
	if err != nil {
		t.Fatal(err)
	}
	g := e.Gateway()
	waitStats(t, g, len(e.PeerDirs())+1)
	st := g.Status()
	if st.Version != "9.8.7-test" {
		t.Errorf("version %q, want the configured one", st.Version)
	}
	var total uint64
	for _, n := range st.Nodes {
		switch n.Role {
		case string(cluster.RolePeer):
			total += n.CapacityBytes
			if n.CapacityBytes != sp.Capacity/6 {
				t.Errorf("%s capacity %d, want a sixth of the disk's %d", n.ID, n.CapacityBytes, sp.Capacity)
			}
			if n.CPU != nil {
				t.Errorf("%s reports CPU %v: the host's, once per peer", n.ID, *n.CPU)
			}
		case string(cluster.RoleGateway):
			if n.CPU == nil {
				t.Errorf("the gateway reports no CPU for the process")
			}
		}
	}
	if total > sp.Capacity || total < sp.Capacity-6 {
		t.Errorf("peers' capacity adds up to %d, want the disk's %d once", total, sp.Capacity)
	}
}

// waitStats waits until n members have gossiped stats.
func waitStats(t *testing.T, g *Gateway, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		have := 0
		for _, m := range g.node.Members() {
			if !m.StatsAt.IsZero() {
				have++
			}
		}
		if have >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d members sent stats", have, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
