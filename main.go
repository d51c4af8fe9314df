// Command tessera is an S3-compatible, erasure-coded object store in one
// binary. `tessera server DIR...` runs a gateway and its storage peers in
// one process; `tessera peer` and `tessera gateway` run the roles apart.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"tessera/meta"
	"tessera/object"
	"tessera/server"
)

const usage = `tessera: an S3-compatible, erasure-coded object store

Usage:
  tessera server DIR...            gateway and storage peers in one process
  tessera peer DIR --join ADDR,... a storage peer
  tessera gateway --join ADDR,...  an S3 gateway
  tessera admin decommission PEER  drain a peer (PEER: its shard API host:port)
  tessera admin scrub              start a scrub pass on every peer now
  tessera sim [--rho 0.1,0.5 ...]  simulate the read schedulers
  tessera bench --endpoint ADDR    benchmark the read schedulers on a cluster
  tessera version                  print the version

Run "tessera COMMAND -h" for a command's flags. Every flag can also be set
with the environment variable TESSERA_<FLAG> (e.g. TESSERA_ADDRESS).
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "tessera:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "server":
		return runServer(ctx, args[1:], stdout, stderr)
	case "peer":
		return runPeer(ctx, args[1:], stderr)
	case "gateway":
		return runGateway(ctx, args[1:], stderr)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "tessera", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// commonFlags are shared by the roles that log.
type commonFlags struct {
	logLevel  string
	logFormat string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "console", "log format: console or json")
}

func (c *commonFlags) logger(w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(c.logLevel)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("--log-level: %w", err)
	}
	if c.logFormat == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return envOverride(fs)
}

// parseInterleaved lets positional DIRs and flags come in any order, as
// users type `tessera server /data --address :9000`.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, envOverride(fs)
}

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var common commonFlags
	common.register(fs)
	cfg := server.DefaultEmbeddedConfig()
	classes := classFlag{}
	fs.StringVar(&cfg.Address, "address", cfg.Address, "S3 endpoint host:port")
	fs.StringVar(&cfg.WebAddress, "web-address", cfg.WebAddress, "status page, metrics and health host:port")
	fs.BoolVar(&cfg.WebPublic, "web-public", false, "serve the status page and /api/status without login")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.IntVar(&cfg.Peers, "peers", cfg.Peers, "storage peers when a single DIR is given")
	fs.Var(codeFlag{&cfg.Code}, "ec", "default erasure code K+M")
	fs.Var(classes, "storage-class", "extra storage class NAME=K+M (repeatable)")
	fs.IntVar(&cfg.BlockSize, "block-size", cfg.BlockSize, "erasure block size in bytes")
	registerSched(fs, &cfg.Sched, &cfg.FetchPool)
	var domains listFlag
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate file: serve S3 over https (reloaded on change)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key file for --tls-cert")
	fs.Var(&domains, "domain", "domains for virtual-hosted-style requests, BUCKET.DOMAIN (comma-separated)")
	registerScrub(fs, &cfg.Scrub)
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("server: at least one DIR is required")
	}
	log, err := common.logger(stderr)
	if err != nil {
		return err
	}
	cfg.Dirs, cfg.Classes, cfg.Logger, cfg.Domains = dirs, classes, log, domains
	cfg.Credentials = credentialsFromEnv()
	cfg.Region = envOr("TESSERA_REGION", "us-east-1")
	if cfg.ClockOffset, err = clockOffsetFromEnv(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	srv, err := server.StartEmbedded(ctx, cfg)
	if err != nil {
		return err
	}
	creds := srv.Credentials()
	fmt.Fprintf(stdout, "S3 endpoint: %s://%s\nStatus page: http://%s\nAccessKey: %s\nSecretKey: %s\n",
		srv.Gateway().S3Scheme(), srv.S3Addr(), srv.WebAddr(), creds.AccessKey, creds.SecretKey)
	<-ctx.Done()
	return srv.Close()
}

func runPeer(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("peer", flag.ContinueOnError)
	var common commonFlags
	common.register(fs)
	cfg := server.DefaultPeerConfig()
	var join listFlag
	fs.StringVar(&cfg.Address, "address", cfg.Address, "shard API host:port")
	fs.StringVar(&cfg.Bind, "bind", cfg.Bind, "gossip host:port")
	fs.StringVar(&cfg.Advertise, "advertise-address", "", "shard API host:port other nodes dial (default: --address, with the gossip host when unspecified)")
	fs.Var(&join, "join", "gossip addresses of existing nodes (comma-separated)")
	fs.Var(sizeFlag{&cfg.Capacity}, "capacity", "capacity to advertise, e.g. 10GiB (default: the filesystem's)")
	fs.StringVar(&cfg.Zone, "zone", "", "failure domain label; placement spreads shards over zones")
	fs.IntVar(&cfg.RingWidth, "ring-width", 0, "shards per object (K+M of the gateways' --ec) to balance stored bytes for (default: balance first-choice shares)")
	fs.StringVar(&cfg.WebAddress, "web-address", "", "health probes and /metrics host:port (default: none)")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.Var(timingFlag{&cfg.Timing}, "gossip-timing", "failure detection timing: lan (default) or fast (loopback, tests)")
	registerSendLimit(fs, &cfg.SendLimit)
	registerScrub(fs, &cfg.Scrub)
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return errors.New("peer: exactly one DIR is required")
	}
	log, err := common.logger(stderr)
	if err != nil {
		return err
	}
	cfg.Dir, cfg.Join, cfg.Logger = dirs[0], join, log
	cfg.RingEpochs = true
	cfg.Secret = []byte(os.Getenv("TESSERA_CLUSTER_SECRET"))
	if len(cfg.Secret) == 0 {
		return errors.New("peer: TESSERA_CLUSTER_SECRET must be set for a multi-process cluster")
	}
	p, err := server.StartPeer(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return p.Close()
}

func runGateway(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	var common commonFlags
	common.register(fs)
	cfg := server.DefaultGatewayConfig()
	classes := classFlag{}
	var join listFlag
	fs.StringVar(&cfg.Address, "address", cfg.Address, "S3 endpoint host:port")
	fs.StringVar(&cfg.WebAddress, "web-address", cfg.WebAddress, "status page host:port")
	fs.BoolVar(&cfg.WebPublic, "web-public", false, "serve the status page and /api/status without login")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "", "bearer token required by /metrics (default: open)")
	fs.StringVar(&cfg.Bind, "bind", cfg.Bind, "gossip host:port")
	fs.Var(&join, "join", "gossip addresses of existing nodes (comma-separated)")
	fs.DurationVar(&cfg.Repair.ScanInterval, "scan-interval", cfg.Repair.ScanInterval, "pause between repair scanner passes over every object (0 disables)")
	fs.Float64Var(&cfg.Repair.ScanRate, "scan-rate", 50, "objects per second the repair scanner checks")
	fs.IntVar(&cfg.Repair.Workers, "repair-workers", 2, "objects repaired, and keys the scanner checks, at once")
	fs.DurationVar(&cfg.Repair.TombstoneGrace, "tombstone-grace", object.DefaultTombstoneGrace,
		"age after which the scanner removes a delete's tombstone from every peer, once all hold it (negative keeps them)")
	fs.Var(timingFlag{&cfg.Timing}, "gossip-timing", "failure detection timing: lan (default) or fast (loopback, tests)")
	fs.Var(codeFlag{&cfg.Code}, "ec", "default erasure code K+M")
	fs.Var(classes, "storage-class", "extra storage class NAME=K+M (repeatable)")
	registerSched(fs, &cfg.Sched, &cfg.FetchPool)
	var domains listFlag
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate file: serve S3 over https (reloaded on change)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key file for --tls-cert")
	fs.Var(&domains, "domain", "domains for virtual-hosted-style requests, BUCKET.DOMAIN (comma-separated)")
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := common.logger(stderr)
	if err != nil {
		return err
	}
	cfg.Join, cfg.Classes, cfg.Logger, cfg.Domains = join, classes, log, domains
	cfg.Credentials = credentialsFromEnv()
	cfg.Region = envOr("TESSERA_REGION", "us-east-1")
	if cfg.ClockOffset, err = clockOffsetFromEnv(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if cfg.Credentials.AccessKey == "" || cfg.Credentials.SecretKey == "" || cfg.Credentials.ClusterSecret == "" {
		return errors.New("gateway: TESSERA_ACCESS_KEY, TESSERA_SECRET_KEY and TESSERA_CLUSTER_SECRET must be set")
	}
	g, err := server.StartGateway(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return g.Close()
}

func credentialsFromEnv() server.Credentials {
	return server.Credentials{
		AccessKey:     os.Getenv("TESSERA_ACCESS_KEY"),
		SecretKey:     os.Getenv("TESSERA_SECRET_KEY"),
		ClusterSecret: os.Getenv("TESSERA_CLUSTER_SECRET"),
	}
}

// clockOffsetEnv shifts the clock a gateway stamps versions with. For tests
// only: it stands for a machine whose clock is off, which version order must
// survive.
const clockOffsetEnv = "TESSERA_CLOCK_OFFSET"

// clockOffsetFromEnv parses clockOffsetEnv, a Go duration such as -30s (0
// when unset).
func clockOffsetFromEnv() (time.Duration, error) {
	v := os.Getenv(clockOffsetEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", clockOffsetEnv, err)
	}
	return d, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

var _ = meta.Code{}
