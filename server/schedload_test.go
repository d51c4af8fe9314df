package server

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/meta"
	"tessera/peer"
)

// A peer's send cap reaches the gateway's read scheduler by gossip.
func TestGossipedLinkRate(t *testing.T) {
	ctx := context.Background()
	secret := "link-rate-test-secret-0123456789"
	gcfg := DefaultGatewayConfig()
	gcfg.Address, gcfg.WebAddress, gcfg.Bind = "127.0.0.1:0", "", "127.0.0.1:0"
	gcfg.Credentials = Credentials{AccessKey: "linkrate", SecretKey: "linkrate-secret-key", ClusterSecret: secret}
	gcfg.Timing, gcfg.Logger = cluster.FastTiming(), zerolog.Nop()
	g, err := StartGateway(ctx, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p, err := StartPeer(ctx, PeerConfig{Dir: t.TempDir(), Address: "127.0.0.1:0", Bind: "127.0.0.1:0",
		Join: []string{g.GossipAddr()}, Secret: []byte(secret), Timing: cluster.FastTiming(), Logger: zerolog.Nop(),
		SendLimit: peer.SendLimit{Rate: 12.5e6}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src := gossipLoad{g}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, ok := src.LinkRate(meta.PeerID(p.ID()))
		if ok && r == 12.5e6 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway sees link rate %g %v, want 12.5e6", r, ok)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
