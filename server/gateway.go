package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/gateway/sigv4"
	"tessera/lifecycle"
	"tessera/meta"
	"tessera/object"
	"tessera/sched"
	"tessera/web"
)

// GatewayConfig configures an S3 gateway.
type GatewayConfig struct {
	ID string // empty: random
	// Address serves S3; WebAddress the status page; Bind gossip.
	Address, WebAddress, Bind string
	Join                      []string
	Credentials               Credentials
	Code                      meta.Code
	Classes                   map[string]meta.Code
	Region                    string
	BlockSize                 int
	// TLSCert and TLSKey, both set, serve S3 over https; the files are
	// reloaded when they change.
	TLSCert, TLSKey string
	// Domains enable virtual-hosted-style requests (bucket.domain).
	Domains []string
	// WebPublic serves the status page and /api/status without login;
	// MetricsToken, when set, is the bearer token /metrics requires.
	WebPublic    bool
	MetricsToken string
	// AccessLog logs every S3 request at info level (gateway.Config).
	AccessLog bool
	// Version is the binary's, reported in /api/status (empty: the
	// module's build info, if any).
	Version string
	// Timing tunes failure detection; zero means memberlist's LAN-local
	// defaults.
	Timing cluster.Timing
	// Repair tunes the background repair queue and scanner.
	Repair object.RepairQueueConfig
	// ScrubPoll is how often the peers' scrub reports are polled
	// (DefaultScrubPoll); the lead gateway queues their findings for repair.
	ScrubPoll time.Duration
	// Sched names the read scheduling policy (sched.Policies; "" is the
	// default) and FetchPool is the fetch pool size L (0: 20).
	Sched     string
	FetchPool int
	// WindowMemory bounds the chunk buffers all GETs hold at once
	// (object.Config.WindowMemory; 0: object.DefaultWindowMemory).
	WindowMemory int64
	// Load, when set, replaces the peers' gossiped stats as the per-peer
	// load the read policies read.
	Load   sched.LoadSource
	Logger zerolog.Logger
	// ClockOffset shifts the wall clock under version stamps. For tests
	// only (TESSERA_CLOCK_OFFSET): a gateway whose clock is off.
	ClockOffset time.Duration
	// CrashAfterCommits, for tests only (TESSERA_CRASH_AFTER_COMMITS):
	// the process exits the moment a write's commits landed on the peers
	// of its first N shards, the others held back (object.Config.CutCommits).
	CrashAfterCommits int
	// processCPU gossips this process's CPU rather than the host's: set
	// by StartEmbedded, whose peers run in the gateway's process.
	processCPU bool
}

// DefaultGatewayConfig returns the defaults of `tessera gateway`.
func DefaultGatewayConfig() GatewayConfig {
	return GatewayConfig{
		Address: ":9000", WebAddress: ":9001", Bind: ":7946",
		Code: meta.Code{K: 4, M: 2}, Region: "us-east-1", BlockSize: 1 << 20,
		Repair: object.RepairQueueConfig{ScanInterval: 10 * time.Minute},
	}
}

// Gateway is a running S3 gateway.
type Gateway struct {
	id      string
	cfg     GatewayConfig
	node    *cluster.Node
	view    *clusterView
	layer   *object.Layer
	pool    *object.FetchPool
	repair  *object.RepairQueue
	migrate *object.Migrator
	// settled is the newest epoch this gateway's data mover finished,
	// gossiped in its stats so every node can drop older layouts.
	settled atomic.Uint64
	stopBg  context.CancelFunc
	// lifecycle applies buckets' lifecycle rules (lifecycle.go).
	lifecycle *lifecycle.Worker
	servers   []*http.Server
	lns       []net.Listener
	done      chan struct{}
	log       zerolog.Logger
	// errs and obs feed the status page and /metrics (web.go).
	errs  *web.ErrorLog
	obs   *observer
	scrub scrubWatch
	heals healJobs
}

// StartGateway joins gossip and serves S3 and the status page.
func StartGateway(ctx context.Context, cfg GatewayConfig) (*Gateway, error) {
	if cfg.ID == "" {
		cfg.ID = "gateway-" + randomID()
	}
	errs := web.NewErrorLog(recentErrors)
	cfg.Logger = cfg.Logger.Hook(errs.For(cfg.ID))
	log := cfg.Logger.With().Str("component", "gateway").Str("node", cfg.ID).Logger()
	g := &Gateway{id: cfg.ID, cfg: cfg, log: log, done: make(chan struct{})}
	g.errs = errs
	node, err := cluster.Start(ctx, cluster.Config{
		NodeID: cfg.ID, Role: cluster.RoleGateway, BindAddr: cfg.Bind, Join: cfg.Join,
		Secret: []byte(cfg.Credentials.ClusterSecret), Logger: cfg.Logger, Timing: cfg.Timing,
		Meta: func() cluster.NodeMeta {
			return cluster.NodeMeta{ID: cfg.ID, Role: cluster.RoleGateway, APIAddr: g.S3Addr()}
		},
		Stats: gatewayStats(&g.settled, cfg.processCPU),
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: gossip: %w", err)
	}
	g.node = node
	if g.view, err = newClusterView(node, []byte(cfg.Credentials.ClusterSecret)); err != nil {
		node.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if err := g.build(); err != nil {
		node.Close()
		return nil, err
	}
	if err := g.listen(); err != nil {
		g.stopRepair()
		node.Close()
		return nil, err
	}
	if err := node.UpdateMeta(ctx); err != nil {
		g.log.Warn().Err(err).Msg("advertise S3 address")
	}
	log.Info().Str("s3", g.S3Addr()).Str("web", g.WebAddr()).Str("gossip", node.Addr()).Msg("gateway started")
	return g, nil
}

func (g *Gateway) build() error {
	var err error
	scfg := sched.Config{Slots: g.cfg.FetchPool, Load: g.loadSource(), Local: g.view.isLocal}
	if g.pool, err = object.NewFetchPool(g.cfg.Sched, scfg); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	classes := map[string]meta.Code{}
	for k, v := range g.cfg.Classes {
		classes[k] = v
	}
	rcfg := g.cfg.Repair
	rcfg.Logger = g.cfg.Logger
	g.repair = object.NewRepairQueue(rcfg)
	layer, err := object.New(object.Config{
		Cluster: g.view, DefaultCode: g.cfg.Code, Classes: classes,
		BlockSize: g.cfg.BlockSize, WriterID: g.id, Logger: g.cfg.Logger, Repair: g.repair.Enqueue,
		Pool: g.pool, WindowMemory: g.cfg.WindowMemory, Now: offsetClock(g.cfg.ClockOffset), Alive: g.view.Alive,
		CutCommits: g.cfg.CrashAfterCommits, Crash: crashNow,
	})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.layer = layer
	g.startRepair()
	if err := g.startLifecycle(); err != nil {
		g.stopRepair()
		return err
	}
	return nil
}

// offsetClock is time.Now shifted by offset; nil (time.Now) for none.
func offsetClock(offset time.Duration) func() time.Time {
	if offset == 0 {
		return nil
	}
	return func() time.Time { return time.Now().Add(offset) }
}

func (g *Gateway) listen() error {
	creds := g.cfg.Credentials
	verifier := &sigv4.Verifier{Region: g.cfg.Region, Domains: g.cfg.Domains, Lookup: func(ak string) (string, bool) {
		return creds.SecretKey, ak == creds.AccessKey
	}}
	s3h, err := gateway.New(gateway.Config{Backend: g.layer, Auth: verifier, Region: g.cfg.Region, Logger: g.cfg.Logger,
		Domains: g.cfg.Domains, Admin: g, AccessLog: g.cfg.AccessLog})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	tlsCfg, err := g.tlsConfig()
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	s3h, webh, err := g.observe(&startGate{ready: g.Ready, next: s3h})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	for _, s := range []struct {
		addr string
		h    http.Handler
	}{{g.cfg.Address, s3h}, {g.cfg.WebAddress, webh}} {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			g.closeServers()
			return fmt.Errorf("gateway: listen %s: %w", s.addr, err)
		}
		if tlsCfg != nil && len(g.lns) == 0 {
			ln = tls.NewListener(ln, tlsCfg)
		}
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: zerologStd(g.log)}
		g.lns, g.servers = append(g.lns, ln), append(g.servers, srv)
	}
	for i := range g.servers {
		srv, ln := g.servers[i], g.lns[i]
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				g.log.Error().Err(err).Msg("http server stopped")
			}
		}()
	}
	return nil
}

// tlsConfig is nil for plain http.
func (g *Gateway) tlsConfig() (*tls.Config, error) {
	if g.cfg.TLSCert == "" && g.cfg.TLSKey == "" {
		return nil, nil
	}
	if g.cfg.TLSCert == "" || g.cfg.TLSKey == "" {
		return nil, errors.New("--tls-cert and --tls-key must be set together")
	}
	rl, err := gateway.NewCertReloader(g.cfg.TLSCert, g.cfg.TLSKey)
	if err != nil {
		return nil, err
	}
	return rl.TLSConfig(), nil
}

// S3Scheme is "https" when the S3 endpoint serves TLS, else "http".
func (g *Gateway) S3Scheme() string {
	if g.cfg.TLSCert != "" {
		return "https"
	}
	return "http"
}

// S3Addr is the S3 endpoint's real address ("" before it listens).
func (g *Gateway) S3Addr() string { return g.addr(0) }

// WebAddr is the status page's real address.
func (g *Gateway) WebAddr() string { return g.addr(1) }

func (g *Gateway) addr(i int) string {
	if i >= len(g.lns) {
		return ""
	}
	return g.lns[i].Addr().String()
}

// GossipAddr is the gossip listener's real address.
func (g *Gateway) GossipAddr() string { return g.node.Addr() }

// WaitPeers blocks until n peers are alive in the gateway's view.
func (g *Gateway) WaitPeers(ctx context.Context, n int) error { return g.node.WaitPeers(ctx, n) }

// Close stops serving, then leaves gossip.
func (g *Gateway) Close() error {
	err := g.closeServers()
	g.stopRepair()
	g.pool.Close()
	return errors.Join(err, g.node.Close(), g.view.Close())
}

func (g *Gateway) closeServers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, s := range g.servers {
		if err := s.Shutdown(ctx); err != nil {
			errs = append(errs, s.Close())
		}
	}
	for i := len(g.servers); i < len(g.lns); i++ {
		errs = append(errs, g.lns[i].Close())
	}
	errs = append(errs, g.closeObserver())
	return errors.Join(errs...)
}

// crashNow ends the process at once, deferred calls and all, as a kill
// would: the crash that Config.CrashAfterCommits asks for.
func crashNow() { os.Exit(3) }
