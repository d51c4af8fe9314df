package main

import (
	"context"
	"errors"
	"io"
	"os"

	"tessera/server"
)

const peerAbout = `Runs one storage peer of a multi-process cluster: its shard API on
--address, gossip on --bind, its data in DIR. It joins the cluster through
--join and needs the cluster's TESSERA_CLUSTER_SECRET.`

// peerCmd is `tessera peer`: its flags and the configuration they fill.
type peerCmd struct {
	*command
	log  logFlags
	cfg  server.PeerConfig
	join listFlag
}

func newPeerCmd() *peerCmd {
	c := &peerCmd{command: newCommand("peer", "peer DIR --join ADDR,... [flags]", peerAbout).withConfig(),
		cfg: server.DefaultPeerConfig()}
	c.env = []string{"TESSERA_CLUSTER_SECRET   the cluster secret (required)"}
	fs, cfg := c.fs, &c.cfg
	c.log.register(fs)
	fs.StringVar(&cfg.Address, "address", cfg.Address, "shard API host:port")
	fs.StringVar(&cfg.Bind, "bind", cfg.Bind, "gossip host:port")
	fs.StringVar(&cfg.Advertise, "advertise-address", "", "shard API host:port other nodes dial (default: --address, with the gossip host when unspecified)")
	fs.Var(&c.join, "join", "gossip addresses of existing nodes (comma-separated)")
	fs.Var(sizeFlag{&cfg.Capacity}, "capacity", "capacity to advertise, e.g. 10GiB (default: the filesystem's)")
	fs.Var(sizeFlag{&cfg.IndexCache}, "index-cache", "block cache of the peer's index, e.g. 32MiB: the bound on its index memory")
	fs.StringVar(&cfg.Zone, "zone", "", "failure domain label; placement spreads shards over zones")
	fs.IntVar(&cfg.RingWidth, "ring-width", 0, "shards per object (K+M of the gateways' --ec) to balance stored bytes for (default: balance first-choice shares)")
	fs.StringVar(&cfg.WebAddress, "web-address", "", "health probes and /metrics host:port (default: none)")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.Var(timingFlag{&cfg.Timing}, "gossip-timing", "failure detection timing: lan (default) or fast (loopback, tests)")
	registerSendLimit(fs, &cfg.SendLimit)
	registerScrub(fs, &cfg.Scrub)
	return c
}

// parse fills c.cfg from args, the environment and --config; the logger
// is left for run.
func (c *peerCmd) parse(args []string, stdout io.Writer) error {
	dirs, err := c.command.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return &usageError{cmd: "tessera peer", err: errors.New("exactly one DIR is required")}
	}
	c.cfg.Dir, c.cfg.Join = dirs[0], c.join
	c.cfg.RingEpochs = true
	c.cfg.Secret = []byte(os.Getenv("TESSERA_CLUSTER_SECRET"))
	return nil
}

func runPeer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newPeerCmd()
	if err := c.parse(args, stdout); err != nil {
		return err
	}
	if len(c.cfg.Secret) == 0 {
		return errors.New("peer: TESSERA_CLUSTER_SECRET must be set for a multi-process cluster")
	}
	log, err := c.log.logger(stderr, isTerminal(stderr))
	if err != nil {
		return &usageError{cmd: "tessera peer", err: err}
	}
	c.cfg.Logger = log
	p, err := server.StartPeer(ctx, c.cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return p.Close()
}
