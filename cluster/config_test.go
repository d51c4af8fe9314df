package cluster

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestConfigRejected(t *testing.T) {
	ok := testConfig("a", RolePeer, &metaBox{})
	cases := []struct {
		name string
		mod  func(*Config)
	}{
		{"no id", func(c *Config) { c.NodeID = "" }},
		{"bad role", func(c *Config) { c.Role = "admin" }},
		{"no secret", func(c *Config) { c.Secret = nil }},
		{"no port", func(c *Config) { c.BindAddr = "127.0.0.1" }},
		{"bad port", func(c *Config) { c.BindAddr = "127.0.0.1:99999" }},
		{"advertise without host", func(c *Config) { c.AdvertiseAddr = ":7946" }},
		{"partial timing", func(c *Config) { c.Timing = Timing{ProbeInterval: time.Second} }},
		{"probe timeout too long", func(c *Config) { c.Timing.ProbeTimeout = c.Timing.ProbeInterval }},
		{"no suspicion", func(c *Config) { c.Timing.SuspicionMult = 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.mod(&cfg)
			n, err := Start(context.Background(), cfg)
			if err == nil {
				_ = n.Close()
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestZeroTimingMeansLocal(t *testing.T) {
	cfg := testConfig("a", RolePeer, &metaBox{})
	cfg.Timing = Timing{}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Timing != LocalTiming() {
		t.Fatalf("timing = %+v", cfg.Timing)
	}
}

func TestAdvertiseAddr(t *testing.T) {
	cfg := testConfig("a", RolePeer, &metaBox{})
	cfg.AdvertiseAddr = "127.0.0.2:0" // port 0: the bound port
	n := startNode(t, cfg)
	host, port, _ := strings.Cut(n.Addr(), ":")
	if host != "127.0.0.2" || port == "0" || port == "" {
		t.Fatalf("Addr = %q", n.Addr())
	}
}

func TestGossipKey(t *testing.T) {
	k1, err1 := gossipKey([]byte("s1"))
	k1b, err2 := gossipKey([]byte("s1"))
	k2, err3 := gossipKey([]byte("s2"))
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if len(k1) != 32 || !bytes.Equal(k1, k1b) || bytes.Equal(k1, k2) || bytes.Equal(k1, []byte("s1")) {
		t.Fatalf("keys %x %x %x", k1, k1b, k2)
	}
}

func TestLogBridge(t *testing.T) {
	var buf bytes.Buffer
	b := newLogBridge(zerolog.New(&buf).Level(zerolog.DebugLevel))
	std := b.stdLogger()
	std.Printf("[ERR] memberlist: Failed to probe %s", "x")
	std.Print("no level here")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`{"level":"debug","component":"gossip","gossip_level":"ERR","message":"Failed to probe x"}`,
		`{"level":"debug","component":"gossip","message":"no level here"}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %q", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %s, want %s", i, lines[i], want[i])
		}
	}

	buf.Reset()
	quiet := newLogBridge(zerolog.New(&buf).Level(zerolog.InfoLevel))
	quiet.stdLogger().Print("[WARN] memberlist: chatter")
	if buf.Len() != 0 {
		t.Fatalf("debug output leaked at info level: %s", buf.String())
	}
}
