package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/gateway/sigv4"
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
	// Timing tunes failure detection; zero means memberlist's LAN-local
	// defaults.
	Timing cluster.Timing
	Logger zerolog.Logger
}

// DefaultGatewayConfig returns the defaults of `tessera gateway`.
func DefaultGatewayConfig() GatewayConfig {
	return GatewayConfig{
		Address: ":9000", WebAddress: ":9001", Bind: ":7946",
		Code: meta.Code{K: 4, M: 2}, Region: "us-east-1", BlockSize: 1 << 20,
	}
}

// Gateway is a running S3 gateway.
type Gateway struct {
	id      string
	cfg     GatewayConfig
	node    *cluster.Node
	view    *clusterView
	layer   *object.Layer
	tracker *sched.Tracker
	policy  sched.Policy
	servers []*http.Server
	lns     []net.Listener
	done    chan struct{}
	log     zerolog.Logger
}

// StartGateway joins gossip and serves S3 and the status page.
func StartGateway(ctx context.Context, cfg GatewayConfig) (*Gateway, error) {
	if cfg.ID == "" {
		cfg.ID = "gateway-" + randomID()
	}
	log := cfg.Logger.With().Str("component", "gateway").Str("node", cfg.ID).Logger()
	g := &Gateway{id: cfg.ID, cfg: cfg, log: log, done: make(chan struct{})}
	node, err := cluster.Start(ctx, cluster.Config{
		NodeID: cfg.ID, Role: cluster.RoleGateway, BindAddr: cfg.Bind, Join: cfg.Join,
		Secret: []byte(cfg.Credentials.ClusterSecret), Logger: cfg.Logger, Timing: cfg.Timing,
		Meta: func() cluster.NodeMeta {
			return cluster.NodeMeta{ID: cfg.ID, Role: cluster.RoleGateway, APIAddr: g.S3Addr()}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: gossip: %w", err)
	}
	g.node = node
	g.view = newClusterView(node, []byte(cfg.Credentials.ClusterSecret))
	if err := g.build(); err != nil {
		node.Close()
		return nil, err
	}
	if err := g.listen(); err != nil {
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
	g.tracker = sched.NewTracker(sched.DefaultTrackerConfig())
	policy, err := sched.New(sched.DefaultPolicy, g.tracker)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.policy = policy
	classes := map[string]meta.Code{}
	for k, v := range g.cfg.Classes {
		classes[k] = v
	}
	layer, err := object.New(object.Config{
		Cluster: g.view, Scheduler: g.policy, DefaultCode: g.cfg.Code, Classes: classes,
		BlockSize: g.cfg.BlockSize, WriterID: g.id, Logger: g.cfg.Logger,
	})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.layer = layer
	return nil
}

func (g *Gateway) listen() error {
	creds := g.cfg.Credentials
	verifier := &sigv4.Verifier{Region: g.cfg.Region, Lookup: func(ak string) (string, bool) {
		return creds.SecretKey, ak == creds.AccessKey
	}}
	s3h, err := gateway.New(gateway.Config{Backend: g.layer, Auth: verifier, Region: g.cfg.Region, Logger: g.cfg.Logger})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	webh := web.New(web.Config{Source: g, Logger: g.cfg.Logger})
	for _, s := range []struct {
		addr string
		h    http.Handler
	}{{g.cfg.Address, s3h}, {g.cfg.WebAddress, webh}} {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			g.closeServers()
			return fmt.Errorf("gateway: listen %s: %w", s.addr, err)
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
	return errors.Join(errs...)
}
