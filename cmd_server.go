package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"tessera/server"
)

const serverAbout = `Runs an S3 gateway and its storage peers in one process. With one DIR,
--peers storage peers live in DIR/peer1..N; with several DIRs, one peer
lives in each (one per disk). On first start the S3 keys and the cluster
secret are generated and kept in the first DIR's tessera.secrets (mode
0600); the keys are printed then, and later starts say where they are.`

// serverEnv are the variables beside TESSERA_<FLAG> the server reads.
var serverEnv = []string{
	"TESSERA_ACCESS_KEY, TESSERA_SECRET_KEY   S3 keys (default: generated on first start)",
	"TESSERA_CLUSTER_SECRET                   cluster secret (default: generated on first start)",
	"TESSERA_REGION                           S3 region (default us-east-1)",
}

// serverCmd is `tessera server`: its flags and the configuration they
// fill.
type serverCmd struct {
	*command
	log     logFlags
	cfg     server.EmbeddedConfig
	classes classFlag
	domains listFlag
}

func newServerCmd() *serverCmd {
	c := &serverCmd{command: newCommand("server", "server DIR... [flags]", serverAbout).withConfig(),
		cfg: server.DefaultEmbeddedConfig(), classes: classFlag{}}
	c.env = serverEnv
	fs, cfg := c.fs, &c.cfg
	c.log.register(fs)
	fs.StringVar(&cfg.Address, "address", cfg.Address, "S3 endpoint host:port")
	fs.StringVar(&cfg.WebAddress, "web-address", cfg.WebAddress, "status page, metrics and health host:port")
	fs.BoolVar(&cfg.WebPublic, "web-public", false, "serve the status page and /api/status without login")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.BoolVar(&cfg.AccessLog, "access-log", false, "log every S3 request at info level (default: debug)")
	fs.IntVar(&cfg.Peers, "peers", cfg.Peers, "storage peers when a single DIR is given")
	fs.StringVar(&cfg.PeerAddress, "peer-address", cfg.PeerAddress, "first peer's shard API host:port (admin calls); the others take the ports after it; port 0 picks free ports")
	fs.Var(codeFlag{&cfg.Code}, "ec", "default erasure code K+M")
	fs.Var(c.classes, "storage-class", "extra storage class NAME=K+M (repeatable)")
	fs.IntVar(&cfg.BlockSize, "block-size", cfg.BlockSize, "erasure block size in bytes")
	registerSched(fs, &cfg.Sched, &cfg.FetchPool)
	registerGetMemory(fs, &cfg.WindowMemory)
	fs.Var(sizeFlag{&cfg.IndexCache}, "index-cache", "block cache all the peers' indexes share, e.g. 64MiB: the bound on index memory")
	registerTLS(fs, &cfg.TLSCert, &cfg.TLSKey, &c.domains)
	registerScrub(fs, &cfg.Scrub)
	registerRepair(fs, &cfg.Repair)
	return c
}

// parse fills c.cfg from args, the environment and --config; the logger
// is left for run.
func (c *serverCmd) parse(args []string, stdout io.Writer) error {
	dirs, err := c.command.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return &usageError{cmd: "tessera server", err: errors.New("at least one DIR is required")}
	}
	c.cfg.Dirs, c.cfg.Classes, c.cfg.Domains = dirs, c.classes, c.domains
	c.cfg.Credentials = credentialsFromEnv()
	c.cfg.Region = envOr("TESSERA_REGION", "us-east-1")
	c.cfg.Version = version
	if c.cfg.ClockOffset, err = clockOffsetFromEnv(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// runServer starts the embedded server and prints its banner before any
// log line: the log is held while the server starts.
func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newServerCmd()
	if err := c.parse(args, stdout); err != nil {
		return err
	}
	held := newHeldWriter(stderr)
	defer held.release()
	log, err := c.log.logger(held, isTerminal(stderr))
	if err != nil {
		return &usageError{cmd: "tessera server", err: err}
	}
	c.cfg.Logger = log
	srv, err := server.StartEmbedded(ctx, c.cfg)
	if err != nil {
		return err
	}
	given := c.cfg.Credentials
	printBanner(stdout, srv, given.AccessKey != "" && given.SecretKey != "")
	held.release()
	<-ctx.Done()
	return srv.Close()
}
