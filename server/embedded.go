package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"tessera/cluster"
	"tessera/meta"
	"tessera/object"
	"tessera/scrub"
	"tessera/storage"
)

// EmbeddedConfig configures `tessera server`: one gateway and its storage
// peers in one process, each peer with its own directory and shard API
// listener on loopback (for admin calls: scrub, drain). The gateway's
// object layer calls the peers' stores directly (localPeer), and the
// peers are members the gateway's gossip node hosts (cluster.Hosted):
// one membership view for the process, no gossip between its parts.
type EmbeddedConfig struct {
	// Dirs: one DIR holds peers in DIR/peer1..DIR/peerN; several DIRs hold
	// one peer each (one per disk).
	Dirs []string
	// PeerAddress is the first peer's shard API address (for admin calls:
	// scrub, decommission); peer i listens on its port + i - 1. A port of
	// 0, the default, picks free ports.
	PeerAddress string
	// IndexCache is the block cache in bytes that every peer's index
	// shares (DefaultEmbeddedIndexCache when 0): the bound on the index
	// memory of the whole process, whatever the object count.
	IndexCache  uint64
	Peers       int
	Address     string
	WebAddress  string
	Code        meta.Code
	Classes     map[string]meta.Code
	Region      string
	BlockSize   int
	Credentials Credentials
	Logger      zerolog.Logger
	// TLSCert, TLSKey and Domains are passed to the gateway.
	TLSCert, TLSKey string
	Domains         []string
	// WebPublic, MetricsToken, AccessLog and Version are passed to the
	// gateway.
	WebPublic    bool
	MetricsToken string
	AccessLog    bool
	Version      string
	// StartTimeout bounds how long to wait for every peer to be alive in
	// the gateway's view.
	StartTimeout time.Duration
	// Sched, FetchPool and WindowMemory are passed to the gateway.
	Sched        string
	FetchPool    int
	WindowMemory int64
	// ClockOffset is passed to the gateway (for tests only).
	ClockOffset time.Duration
	// Repair tunes the gateway's repair queue, scanner and tombstone
	// collector.
	Repair object.RepairQueueConfig
	// RetireGrace is how long the shard files of a replaced or deleted
	// version stay readable on each peer (storage.DefaultRetireGrace when
	// 0); tests shorten it.
	RetireGrace time.Duration
	// Scrub tunes every peer's scrubber. Peers sharing one DIR share
	// its disk, so its rate caps are split between them.
	Scrub scrub.Config
}

// DefaultEmbeddedIndexCache is the embedded server's shared index cache:
// twice one lone peer's, for six peers (storage.DefaultCacheSize).
const DefaultEmbeddedIndexCache = 2 * storage.DefaultCacheSize

// DefaultEmbeddedConfig returns the defaults of `tessera server`.
func DefaultEmbeddedConfig() EmbeddedConfig {
	return EmbeddedConfig{
		Peers: 6, Address: ":9000", WebAddress: ":9001", Code: meta.Code{K: 4, M: 2},
		Region: "us-east-1", BlockSize: 1 << 20, StartTimeout: 30 * time.Second,
		IndexCache: DefaultEmbeddedIndexCache, PeerAddress: "127.0.0.1:0",
		Repair: DefaultGatewayConfig().Repair,
	}
}

// Embedded is a running embedded server.
type Embedded struct {
	gw    *Gateway
	peers []*Peer
	creds Credentials
	// firstStart: this start made the secrets file (secretsPath).
	firstStart  bool
	secretsPath string
	dirs        []string
	// locks are the DIRs' locks the server holds itself: the one DIR of
	// a single-DIR server (its peers lock their own subdirectories), or,
	// with several DIRs, those not yet handed to their peer.
	locks []*storage.DirLock
}

// StartEmbedded starts the gateway, then the peers as members its gossip
// node hosts, and returns once the gateway sees every peer alive.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	dirs, err := peerDirs(cfg.Dirs, cfg.Peers)
	if err != nil {
		return nil, err
	}
	if cfg.Code.N() > len(dirs) {
		return nil, codeTooWide(cfg.Code, len(dirs), len(cfg.Dirs) == 1)
	}
	for name, c := range cfg.Classes {
		if c.N() > len(dirs) {
			cfg.Logger.Warn().Str("class", name).Str("code", c.String()).Int("peers", len(dirs)).
				Msg("storage class wider than the cluster; writes with it will be refused")
		}
	}
	// Locked before anything in them is read or written: a second server
	// on the same DIR must leave the first's files alone.
	locks, err := lockDirs(cfg.Dirs)
	if err != nil {
		return nil, err
	}
	e := &Embedded{dirs: dirs, locks: locks}
	creds, generated, err := LoadOrCreateCredentials(cfg.Dirs[0], cfg.Credentials)
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	e.secretsPath = filepath.Join(cfg.Dirs[0], secretsFile)
	if generated {
		cfg.Logger.Info().Str("file", e.secretsPath).Msg("generated credentials")
	}
	e.creds, e.firstStart = creds, generated
	gcfg := GatewayConfig{
		Address: cfg.Address, WebAddress: cfg.WebAddress, Bind: "127.0.0.1:0", Credentials: creds,
		Code: cfg.Code, Classes: cfg.Classes, Region: cfg.Region, BlockSize: cfg.BlockSize, Logger: cfg.Logger,
		Timing: cluster.FastTiming(), TLSCert: cfg.TLSCert, TLSKey: cfg.TLSKey, Domains: cfg.Domains,
		WebPublic: cfg.WebPublic, MetricsToken: cfg.MetricsToken, AccessLog: cfg.AccessLog, Version: cfg.Version, processCPU: true,
		Sched: cfg.Sched, FetchPool: cfg.FetchPool, WindowMemory: cfg.WindowMemory, ClockOffset: cfg.ClockOffset,
		Repair: cfg.Repair,
	}
	if e.gw, err = StartGateway(ctx, gcfg); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	// The peers start in parallel: each opens its store, and a store's
	// start-up work (wiping staging, loading what it holds) is on its own
	// disk dir, so the slowest one, not their sum, sets the start time.
	peers := make([]*Peer, len(dirs))
	errs := make([]error, len(dirs))
	addrs, err := peerAddresses(cmp.Or(cfg.PeerAddress, "127.0.0.1:0"), len(dirs))
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	shares := fsShares(dirs)
	cache := storage.NewIndexCache(int64(cmp.Or(cfg.IndexCache, DefaultEmbeddedIndexCache)))
	defer cache.Close() // the stores hold their own references
	var wg sync.WaitGroup
	for i, dir := range dirs {
		pcfg := PeerConfig{Dir: dir, Address: addrs[i], Secret: []byte(creds.ClusterSecret),
			// The peers' warnings join the gateway's on the status page.
			Logger: cfg.Logger.Hook(e.gw.errs.For(filepath.Base(dir))),
			Scrub:  cfg.Scrub, host: e.gw.node, fsShare: shares[i], indexCache: cache, retireGrace: cfg.RetireGrace}
		if len(cfg.Dirs) == 1 {
			pcfg.Scrub.BytesPerSec /= float64(len(dirs))
			pcfg.Scrub.ObjectsPerSec /= float64(len(dirs))
			pcfg.NewID = fmt.Sprintf("peer%d", i+1)
		} else {
			pcfg.lock, e.locks[i] = e.locks[i], nil // the peer owns it now
		}
		wg.Go(func() { peers[i], errs[i] = StartPeer(ctx, pcfg) })
	}
	wg.Wait()
	for _, p := range peers {
		if p != nil {
			e.peers = append(e.peers, p)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	for _, p := range e.peers {
		e.gw.view.addLocal(meta.PeerID(p.id), localPeer{Store: p.store, meter: p.meter})
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := e.gw.WaitPeers(wctx, len(dirs)); err != nil {
		return nil, errors.Join(fmt.Errorf("server: waiting for %d peers: %w", len(dirs), err), e.Close())
	}
	return e, nil
}

func peerDirs(dirs []string, n int) ([]string, error) {
	switch {
	case len(dirs) == 0:
		return nil, errors.New("server: no data directory")
	case len(dirs) > 1:
		return dirs, nil
	case n < 1:
		return nil, fmt.Errorf("server: --peers %d: need at least 1", n)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(dirs[0], fmt.Sprintf("peer%d", i+1))
	}
	return out, nil
}

// S3Addr is the S3 endpoint's address.
func (e *Embedded) S3Addr() string { return e.gw.S3Addr() }

// WebAddr is the status page's address.
func (e *Embedded) WebAddr() string { return e.gw.WebAddr() }

// Credentials are the S3 keys and cluster secret in use.
func (e *Embedded) Credentials() Credentials { return e.creds }

// FirstStart reports whether this start generated credentials and made
// the secrets file: the one start that shows the keys.
func (e *Embedded) FirstStart() bool { return e.firstStart }

// SecretsFile is the path of the file that keeps the credentials.
func (e *Embedded) SecretsFile() string { return e.secretsPath }

// PeerDirs are the peers' data directories, in start order.
func (e *Embedded) PeerDirs() []string { return e.dirs }

// Gateway is the embedded gateway.
func (e *Embedded) Gateway() *Gateway { return e.gw }

// StopPeer stops the i-th peer (PeerDirs order) the way a crash looks to
// the others: it stops answering and the gateway's view records it dead
// at once, without a leave, so it stays on the ring and keeps its
// placements. Close skips it. Not safe to call concurrently with Close.
func (e *Embedded) StopPeer(i int) error {
	if i < 0 || i >= len(e.peers) || e.peers[i] == nil {
		return fmt.Errorf("server: no running peer %d", i)
	}
	p := e.peers[i]
	e.peers[i] = nil
	return p.Close()
}

// Close stops the gateway, then every peer still running, then releases
// the DIRs.
func (e *Embedded) Close() error {
	var errs []error
	if e.gw != nil {
		errs = append(errs, e.gw.Close())
	}
	// In parallel: each peer's store flushes its index on close.
	perr := make([]error, len(e.peers))
	var wg sync.WaitGroup
	for i, p := range e.peers {
		if p != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				perr[i] = p.Close()
			}()
		}
	}
	wg.Wait()
	errs = append(errs, perr...)
	for _, l := range e.locks {
		errs = append(errs, l.Unlock())
	}
	return errors.Join(errs...)
}

// lockDirs locks every DIR given, or none: on failure the ones already
// taken are released.
func lockDirs(dirs []string) ([]*storage.DirLock, error) {
	locks := make([]*storage.DirLock, 0, len(dirs))
	for _, d := range dirs {
		l, err := storage.LockDir(d)
		if err != nil {
			for _, held := range locks {
				err = errors.Join(err, held.Unlock())
			}
			return nil, fmt.Errorf("server: %w", err)
		}
		locks = append(locks, l)
	}
	return locks, nil
}

// peerAddresses spreads n peers' shard API addresses from first: the same
// host, ports counting up from first's (all 0 when it is 0).
func peerAddresses(first string, n int) ([]string, error) {
	host, port, err := net.SplitHostPort(first)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 0 || p+n-1 > 65535 || (p > 0 && p+n-1 < p) {
		return nil, fmt.Errorf("peer address %q: want HOST:PORT with room for %d ports", first, n)
	}
	out := make([]string, n)
	for i := range out {
		q := 0
		if p > 0 {
			q = p + i
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(q))
	}
	return out, nil
}
