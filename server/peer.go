package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/meta"
	"tessera/peer"
	"tessera/scrub"
	"tessera/storage"
)

// PeerConfig configures a storage peer.
type PeerConfig struct {
	Dir string
	// NewID names the peer on its first start (random when empty); later
	// starts use the ID stored in Dir, so a peer keeps its ring position
	// even if its directory is passed in another order.
	NewID string
	// Address is the shard API listener; Bind the gossip listener.
	Address, Bind string
	// Advertise is the shard API address other nodes dial. Empty means
	// Address, with an unspecified host (0.0.0.0, ::) replaced by the host
	// gossip advertises.
	Advertise string
	Join      []string
	Secret    []byte
	Zone      string
	// Capacity, when non-zero, is the capacity the peer advertises instead
	// of its filesystem's (free bytes are capped to it), so peers sharing
	// one disk can still weigh differently on the ring.
	Capacity uint64
	// RingEpochs makes the peer take part in capacity-weighted ring
	// epochs: it mints them while it is the alive peer with the lowest ID
	// and keeps the adopted one in Dir. Off (the embedded server), the
	// ring is every peer seen with weight 1.
	RingEpochs bool
	// RingWidth is the shard count per object (K+M) the ring epochs
	// balance stored bytes for; 0 balances first-choice shares.
	RingWidth int
	Timing    cluster.Timing
	Logger    zerolog.Logger
	// WebAddress, when set, serves /health/live, /health/ready and
	// /metrics (behind MetricsToken when set); see peerweb.go.
	WebAddress, MetricsToken string
	// SendLimit paces the peer's shard streams: a shared send rate and a
	// delay per stream, to emulate slower NICs and disks in benchmarks.
	SendLimit peer.SendLimit
	// Scrub tunes the background scrubber (interval and rate caps; Dir
	// and Logger are the peer's).
	Scrub scrub.Config
	// retireGrace is storage.Config.RetireGrace (EmbeddedConfig).
	retireGrace time.Duration
	// IndexCache is the block cache of the peer's index in bytes
	// (storage.DefaultCacheSize when 0).
	IndexCache uint64
	// indexCache, when set, is a cache the peer's index shares with the
	// other peers of this process instead (tessera server).
	indexCache *storage.IndexCache
	// lock, when set, is Dir's lock, already taken by the caller; the peer
	// owns it from StartPeer on, whether or not the start succeeds.
	lock *storage.DirLock
	// fsShare, when above 1, is how many peers of this process share the
	// peer's filesystem: each advertises that share of its capacity and
	// free bytes, so the cluster's totals count the disk once.
	fsShare int
	// host, when set, is the gossip node of this process (tessera
	// server's gateway): the peer becomes a member it hosts, with no
	// gossip of its own, and Bind, Join, Timing and RingEpochs are unused.
	host *cluster.Node
}

// membership is how a peer is part of the cluster: its own gossip node
// (cluster.Node) or a member its process's node hosts (cluster.Hosted).
type membership interface {
	UpdateMeta(context.Context) error
	// Members is every member known, the peer included.
	Members() []cluster.Member
	// View is the ring this membership follows.
	View() *cluster.View
	// Addr is the gossip address the peer is reached through.
	Addr() string
	Close() error
}

// DefaultPeerConfig returns the defaults of `tessera peer`.
func DefaultPeerConfig() PeerConfig {
	return PeerConfig{Address: ":9100", Bind: ":7946", IndexCache: storage.DefaultCacheSize}
}

// Peer is a running storage peer.
type Peer struct {
	meter    *peer.Meter
	cpu      *cluster.CPUSampler
	stopMeta func()
	draining atomic.Bool
	id       string
	store    *storage.Store
	http     *http.Server
	ln       net.Listener
	node     membership
	log      zerolog.Logger
	// advertised is the shard API address in NodeMeta; memberlist reads it
	// from its own goroutines.
	advertised atomic.Value
	done       chan struct{}
	web        *peerWeb
	lock       *storage.DirLock
	scrub      *scrub.Scrubber
	stopScrub  func()
	// ringWidth is PeerConfig.RingWidth, advertised so gateways compute
	// the layout the proposer would.
	ringWidth int
}

// StartPeer locks the peer's directory, opens its store, serves its shard
// API and joins gossip. A directory another process holds is refused with
// storage.ErrLocked before anything in it is read or written.
func StartPeer(ctx context.Context, cfg PeerConfig) (*Peer, error) {
	lock := cfg.lock
	if len(cfg.Secret) == 0 {
		return nil, errors.Join(errors.New("peer: a cluster secret is required"), lock.Unlock())
	}
	if lock == nil {
		var err error
		if lock, err = storage.LockDir(cfg.Dir); err != nil {
			return nil, fmt.Errorf("peer: %w", err)
		}
	}
	p, err := startPeer(ctx, cfg)
	if err != nil {
		return nil, errors.Join(err, lock.Unlock())
	}
	p.lock = lock
	return p, nil
}

func startPeer(ctx context.Context, cfg PeerConfig) (*Peer, error) {
	id, err := loadOrCreateID(cfg.Dir, cfg.NewID)
	if err != nil {
		return nil, err
	}
	var store *storage.Store
	log := cfg.Logger.With().Str("component", "peer").Str("peer", id).Logger()
	store, err = storage.Open(cfg.Dir, storage.Config{Logger: log, CacheSize: int64(cfg.IndexCache), Cache: cfg.indexCache,
		RetireGrace: cfg.retireGrace})
	if err != nil {
		return nil, fmt.Errorf("peer %s: %w", id, err)
	}
	p := &Peer{id: id, store: store, log: log, done: make(chan struct{}), stopScrub: func() {}, ringWidth: cfg.RingWidth}
	scfg := cfg.Scrub
	scfg.Dir, scfg.Logger = cfg.Dir, log
	if p.scrub, err = scrub.New(store, scfg); err != nil {
		store.Close()
		return nil, fmt.Errorf("peer %s: %w", id, err)
	}
	if err := p.serve(cfg); err != nil {
		store.Close()
		return nil, err
	}
	p.runScrub()
	node, err := p.join(ctx, cfg)
	if err != nil {
		p.shutdown()
		return nil, fmt.Errorf("peer %s: gossip: %w", id, err)
	}
	p.node = node
	p.store.SetPlacer(ringPlacer{id: meta.PeerID(id), view: node.View()})
	if err := p.advertise(ctx, cfg.Advertise); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	if err := p.startWeb(cfg.WebAddress, cfg.MetricsToken); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	p.stopMeta = p.refreshMeta()
	log.Info().Str("api", p.advertised.Load().(string)).Str("gossip", p.node.Addr()).Str("dir", cfg.Dir).Msg("peer started")
	return p, nil
}

// join makes the peer a member of the cluster: hosted by cfg.host, or
// through a gossip node of its own.
func (p *Peer) join(ctx context.Context, cfg PeerConfig) (membership, error) {
	meta := p.nodeMeta(cfg.Zone, cfg.Capacity, cfg.SendLimit.Rate, cfg.fsShare)
	if cfg.host != nil {
		return cfg.host.Host(cluster.HostedConfig{NodeID: p.id, Role: cluster.RolePeer, Meta: meta, Stats: p.stats})
	}
	return cluster.Start(ctx, cluster.Config{
		NodeID: p.id, Role: cluster.RolePeer, BindAddr: cfg.Bind, Join: cfg.Join,
		Secret: cfg.Secret, Meta: meta, Logger: cfg.Logger, Timing: cfg.Timing,
		Stats: p.stats, Propose: cfg.RingEpochs, EpochFile: epochFile(cfg), RingWidth: cfg.RingWidth,
	})
}

func (p *Peer) serve(cfg PeerConfig) error {
	// Other nodes reach the shard API only over TLS with a certificate of
	// the cluster CA (peer.NewTLS).
	certs, err := peer.NewTLS(cfg.Secret)
	if err != nil {
		return fmt.Errorf("peer %s: %w", p.id, err)
	}
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return fmt.Errorf("peer %s: listen %s: %w", p.id, cfg.Address, err)
	}
	p.ln = ln
	p.advertised.Store(guessAdvertise(cfg.Advertise, ln.Addr().String()))
	p.meter, p.cpu = peer.NewMeter(), cluster.NewCPUSampler()
	p.draining.Store(fileExists(filepath.Join(cfg.Dir, drainFile)))
	h := p.meter.Wrap(peer.NewServer(peer.ServerConfig{Store: p.store, Secret: cfg.Secret, Logger: p.log,
		SendLimit: cfg.SendLimit, Scrub: p.scrub, Drain: func(ctx context.Context) error { return p.drain(ctx, cfg.Dir) }}))
	p.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: zerologStd(p.log), TLSConfig: certs.Server}
	go func() {
		defer close(p.done)
		if err := p.http.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error().Err(err).Msg("shard API stopped")
		}
	}()
	return nil
}

func (p *Peer) nodeMeta(zone string, capacity uint64, sendCap float64, share int) func() cluster.NodeMeta {
	return func() cluster.NodeMeta {
		api := p.advertised.Load().(string)
		m := cluster.NodeMeta{ID: p.id, Role: cluster.RolePeer, APIAddr: api, Zone: zone,
			LinkRate: linkRate(api, sendCap)}
		if sp, err := p.store.Space(); err == nil {
			m.Capacity, m.Free, m.DiskFull = sp.Capacity, sp.Free, sp.Full
			if share > 1 {
				m.Capacity, m.Free = sp.Capacity/uint64(share), sp.Free/uint64(share)
			}
		}
		if capacity > 0 {
			m.Capacity, m.Free = capacity, min(m.Free, capacity)
		}
		m.Draining = p.draining.Load()
		m.RingWidth = p.ringWidth
		return m
	}
}

// advertise settles the shard API address other nodes dial and gossips it.
func (p *Peer) advertise(ctx context.Context, addr string) error {
	if addr == "" {
		host, port, err := net.SplitHostPort(p.ln.Addr().String())
		if err != nil {
			return fmt.Errorf("peer %s: %w", p.id, err)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			if host, _, err = net.SplitHostPort(p.node.Addr()); err != nil {
				return fmt.Errorf("peer %s: gossip address: %w", p.id, err)
			}
		}
		addr = net.JoinHostPort(host, port)
	}
	if addr == p.advertised.Load().(string) {
		return nil
	}
	p.advertised.Store(addr)
	if err := p.node.UpdateMeta(ctx); err != nil {
		return fmt.Errorf("peer %s: advertise %s: %w", p.id, addr, err)
	}
	return nil
}

// guessAdvertise is the address to gossip before gossip has started: the
// configured one, or the listener's with an unspecified host replaced by
// the private IP memberlist will advertise too. advertise corrects it once
// gossip knows better.
func guessAdvertise(configured, listen string) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsUnspecified() {
		return listen
	}
	if private, err := sockaddr.GetPrivateIP(); err == nil && private != "" {
		return net.JoinHostPort(private, port)
	}
	return listen
}

// runScrub runs the scrubber until shutdown, which waits for it to save
// its state before the store closes.
func (p *Peer) runScrub() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.scrub.Run(ctx)
	}()
	p.stopScrub = func() { cancel(); <-done }
}

// ScrubReport is the scrubber's status, for the peer's /metrics.
func (p *Peer) ScrubReport() scrub.Report { return p.scrub.Report(0) }

// ID is the peer's stable identifier.
func (p *Peer) ID() string { return p.id }

// APIAddr is the shard API's real address.
func (p *Peer) APIAddr() string { return p.ln.Addr().String() }

// GossipAddr is the gossip listener's real address: the host's for a
// hosted peer.
func (p *Peer) GossipAddr() string { return p.node.Addr() }

// Close leaves gossip (a hosted peer is recorded dead by its host at
// once) and stops serving.
func (p *Peer) Close() error {
	var err error
	if p.stopMeta != nil {
		p.stopMeta()
	}
	if p.node != nil {
		err = p.node.Close()
	}
	return errors.Join(err, p.closeWeb(), p.shutdown())
}

func (p *Peer) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.http.Shutdown(ctx)
	if err != nil {
		err = p.http.Close()
	}
	<-p.done
	p.stopScrub()
	return errors.Join(err, p.store.Close(), p.lock.Unlock())
}

const idFile = "node.id"

// loadOrCreateID returns the peer ID stored in dir. An ID survives restarts
// so the peer keeps its place on the ring.
func loadOrCreateID(dir, newID string) (string, error) {
	path := filepath.Join(dir, idFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if id := strings.TrimSpace(string(b)); validID(id) {
			return id, nil
		}
		return "", fmt.Errorf("peer: %s holds no valid ID; restore it or remove it to join as a new peer", path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("peer: read %s: %w", path, err)
	}
	id := newID
	if id == "" {
		id = "peer-" + randomID()
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("peer: write %s: %w", path, err)
	}
	return id, nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func epochFile(cfg PeerConfig) string {
	if !cfg.RingEpochs {
		return ""
	}
	return filepath.Join(cfg.Dir, "ring.epoch")
}

// ringPlacer answers the store's placement questions (storage.Placer)
// from the ring the peer's membership follows, which is the gateways'
// ring: a locked copy may be dropped only from a peer that ring no longer
// places the key on.
type ringPlacer struct {
	id   meta.PeerID
	view *cluster.View
}

func (r ringPlacer) Placed(bucket, key string, n int) (bool, error) {
	ps, err := r.view.Placement(bucket, key, n)
	if err != nil {
		return false, err
	}
	return slices.Contains(ps, r.id), nil
}
