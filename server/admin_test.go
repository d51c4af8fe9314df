package server

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/meta"
	"tessera/object"
)

func TestResolvePeer(t *testing.T) {
	peer := func(id, api, gossip string) cluster.Member {
		return cluster.Member{NodeMeta: cluster.NodeMeta{ID: id, Role: cluster.RolePeer, APIAddr: api}, Addr: gossip}
	}
	peers := []cluster.Member{
		peer("peer-3f2a", "10.0.0.1:9100", "10.0.0.1:7946"),
		peer("peer-3f9c", "10.0.0.2:9100", "10.0.0.2:7946"),
		peer("peer-b7", "10.0.0.3:9100", ""),
	}
	cases := []struct {
		name, want, refusal string
	}{
		{"peer-3f9c", "peer-3f9c", ""},
		{"10.0.0.1:9100", "peer-3f2a", ""},
		{"10.0.0.2:7946", "peer-3f9c", ""},
		{"peer-b", "peer-b7", ""},
		{"peer-3f", "", "begins the IDs of peer-3f2a, peer-3f9c"},
		{"10.0.0.9:9100", "", "the peers are peer-3f2a (10.0.0.1:9100)"},
		{"", "", "begins the IDs of"}, // every ID starts with ""
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resolvePeer(peers, tc.name)
			if tc.refusal != "" {
				if !errors.Is(err, gateway.ErrAdminRequest) || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("resolve %q: %v, want a refusal with %q", tc.name, err, tc.refusal)
				}
				return
			}
			if err != nil || m.ID != tc.want {
				t.Fatalf("resolve %q: %s, %v; want %s", tc.name, m.ID, err, tc.want)
			}
		})
	}
}

func TestStorageClasses(t *testing.T) {
	cases := []struct {
		code    meta.Code
		classes map[string]meta.Code
		want    string
	}{
		{meta.Code{K: 4, M: 2}, nil, "REDUCED_REDUNDANCY=5+1 STANDARD=4+2"},
		{meta.Code{K: 1, M: 0}, nil, "REDUCED_REDUNDANCY=1+0 STANDARD=1+0"},
		{meta.Code{K: 4, M: 2}, map[string]meta.Code{"ARCHIVE": {K: 2, M: 1}, "REDUCED_REDUNDANCY": {K: 3, M: 1}},
			"ARCHIVE=2+1 REDUCED_REDUNDANCY=3+1 STANDARD=4+2"},
		{meta.Code{K: 4, M: 2}, map[string]meta.Code{"STANDARD": {K: 2, M: 1}}, "REDUCED_REDUNDANCY=5+1 STANDARD=4+2"},
	}
	for _, tc := range cases {
		g := &Gateway{cfg: GatewayConfig{Code: tc.code, Classes: tc.classes}}
		var got []string
		for _, c := range g.StorageClasses() {
			got = append(got, c.Name+"="+c.Code)
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("code %s, classes %v: %s, want %s", tc.code, tc.classes, s, tc.want)
		}
	}
}

// A shard file lost under an intact record is found by a full heal and
// rebuilt; a quick heal, like the scanner, trusts the record.
func TestHealRebuildsLostShardFiles(t *testing.T) {
	e := startTestEmbedded(t, zerolog.Nop())
	g := e.Gateway()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := g.WaitPeers(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if err := g.layer.MakeBucket(ctx, "heal"); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("tessera "), 40<<10) // 320 KiB: not inlined
	for _, key := range []string{"keep/a", "keep/b", "keep/c", "other/d"} {
		if _, err := g.layer.PutObject(ctx, "heal", key, bytes.NewReader(body), int64(len(body)), object.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lost := partFiles(t, filepath.Join(e.PeerDirs()[0], "buckets", "heal"), true)
	if lost != 4 {
		t.Fatalf("removed %d shard files, want one per object", lost)
	}

	if st := waitHeal(t, g, gateway.HealRequest{Bucket: "heal", Prefix: "keep/", Quick: true}); st.Objects != 3 || st.Failed != 0 {
		t.Fatalf("quick heal: %+v", st)
	}
	st := waitHeal(t, g, gateway.HealRequest{Bucket: "heal", Prefix: "keep/"})
	if st.Objects != 3 || st.Repaired != 3 || st.Shards != 3 || st.Failed != 0 || st.Error != "" {
		t.Fatalf("full heal: %+v", st)
	}
	if left := partFiles(t, filepath.Join(e.PeerDirs()[0], "buckets", "heal"), false); left != 3 {
		t.Fatalf("after the heal the peer holds %d of the shard files of keep/, want 3", left)
	}
	if _, err := g.StartHeal(ctx, gateway.HealRequest{Bucket: "nope"}); !errors.Is(err, object.ErrBucketNotFound) {
		t.Fatalf("heal of a missing bucket: %v", err)
	}
	if _, err := g.HealStatus("99"); !errors.Is(err, gateway.ErrAdminRequest) {
		t.Fatalf("status of an unknown job: %v", err)
	}
}

// waitHeal runs a heal job to its end.
func waitHeal(t *testing.T, g *Gateway, req gateway.HealRequest) gateway.HealStatus {
	t.Helper()
	st, err := g.StartHeal(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for st.Finished == nil {
		if time.Now().After(deadline) {
			t.Fatalf("heal %+v did not finish", st)
		}
		time.Sleep(50 * time.Millisecond)
		if st, err = g.HealStatus(st.ID); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// partFiles counts the shard files under dir, deleting them with remove.
func partFiles(t *testing.T, dir string, remove bool) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), "part.") {
			return err
		}
		n++
		if remove {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
