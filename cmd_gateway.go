package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"tessera/object"
	"tessera/server"
)

const gatewayAbout = `Runs an S3 gateway of a multi-process cluster: it holds no data, joins
gossip through --join and serves S3 on --address and the status page on
--web-address.`

// gatewayCmd is `tessera gateway`: its flags and the configuration they
// fill.
type gatewayCmd struct {
	*command
	log     logFlags
	cfg     server.GatewayConfig
	classes classFlag
	join    listFlag
	domains listFlag
}

func newGatewayCmd() *gatewayCmd {
	c := &gatewayCmd{command: newCommand("gateway", "gateway --join ADDR,... [flags]", gatewayAbout).withConfig(),
		cfg: server.DefaultGatewayConfig(), classes: classFlag{}}
	c.env = []string{
		"TESSERA_ACCESS_KEY, TESSERA_SECRET_KEY   S3 keys (required)",
		"TESSERA_CLUSTER_SECRET                   the cluster secret (required)",
		"TESSERA_REGION                           S3 region (default us-east-1)",
	}
	fs, cfg := c.fs, &c.cfg
	c.log.register(fs)
	fs.StringVar(&cfg.Address, "address", cfg.Address, "S3 endpoint host:port")
	fs.StringVar(&cfg.WebAddress, "web-address", cfg.WebAddress, "status page host:port")
	fs.BoolVar(&cfg.WebPublic, "web-public", false, "serve the status page and /api/status without login")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.BoolVar(&cfg.AccessLog, "access-log", false, "log every S3 request at info level (default: debug)")
	fs.StringVar(&cfg.Bind, "bind", cfg.Bind, "gossip host:port")
	fs.Var(&c.join, "join", "gossip addresses of existing nodes (comma-separated)")
	registerRepair(fs, &cfg.Repair)
	fs.Var(timingFlag{&cfg.Timing}, "gossip-timing", "failure detection timing: lan (default) or fast (loopback, tests)")
	fs.Var(codeFlag{&cfg.Code}, "ec", "default erasure code K+M")
	fs.Var(c.classes, "storage-class", "extra storage class NAME=K+M (repeatable)")
	registerSched(fs, &cfg.Sched, &cfg.FetchPool)
	registerGetMemory(fs, &cfg.WindowMemory)
	registerTLS(fs, &cfg.TLSCert, &cfg.TLSKey, &c.domains)
	return c
}

// registerRepair adds the repair scanner's and the tombstone collector's
// flags, of the gateway and the embedded server.
func registerRepair(fs *flag.FlagSet, r *object.RepairQueueConfig) {
	fs.DurationVar(&r.ScanInterval, "scan-interval", r.ScanInterval, "pause between repair scanner passes over every object (0 disables)")
	fs.Float64Var(&r.ScanRate, "scan-rate", 50, "objects per second the repair scanner checks")
	fs.IntVar(&r.Workers, "repair-workers", 2, "objects repaired, and keys the scanner checks, at once")
	fs.DurationVar(&r.TombstoneGrace, "tombstone-grace", object.DefaultTombstoneGrace,
		"age after which a delete's tombstone is removed from every peer, once all hold it (negative keeps them)")
	fs.Float64Var(&r.CollectRate, "collect-rate", object.DefaultCollectRate, "tombstones per second removed from every peer")
}

// registerTLS adds the S3 endpoint's TLS and virtual-host flags, shared by
// server and gateway.
func registerTLS(fs *flag.FlagSet, cert, key *string, domains *listFlag) {
	fs.StringVar(cert, "tls-cert", "", "PEM certificate file: serve S3 over https (reloaded on change)")
	fs.StringVar(key, "tls-key", "", "PEM private key file for --tls-cert")
	fs.Var(domains, "domain", "domains for virtual-hosted-style requests, BUCKET.DOMAIN (comma-separated)")
}

// parse fills c.cfg from args, the environment and --config; the logger
// is left for run.
func (c *gatewayCmd) parse(args []string, stdout io.Writer) error {
	pos, err := c.command.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := c.noArgs(pos); err != nil {
		return err
	}
	c.cfg.Join, c.cfg.Classes, c.cfg.Domains = c.join, c.classes, c.domains
	c.cfg.Credentials = credentialsFromEnv()
	c.cfg.Region = envOr("TESSERA_REGION", "us-east-1")
	c.cfg.Version = version
	if c.cfg.ClockOffset, err = clockOffsetFromEnv(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if c.cfg.CrashAfterCommits, err = crashAfterCommitsFromEnv(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return nil
}

func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newGatewayCmd()
	if err := c.parse(args, stdout); err != nil {
		return err
	}
	creds := c.cfg.Credentials
	if creds.AccessKey == "" || creds.SecretKey == "" || creds.ClusterSecret == "" {
		return errors.New("gateway: TESSERA_ACCESS_KEY, TESSERA_SECRET_KEY and TESSERA_CLUSTER_SECRET must be set")
	}
	log, err := c.log.logger(stderr, isTerminal(stderr))
	if err != nil {
		return &usageError{cmd: "tessera gateway", err: err}
	}
	c.cfg.Logger = log
	g, err := server.StartGateway(ctx, c.cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return g.Close()
}
