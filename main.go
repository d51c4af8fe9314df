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
	"strconv"
	"syscall"
	"time"

	"tessera/server"
)

const usage = `tessera: an S3-compatible, erasure-coded object store

Usage:
  tessera server DIR...            gateway and storage peers in one process
  tessera peer DIR --join ADDR,... a storage peer
  tessera gateway --join ADDR,...  an S3 gateway
  tessera admin COMMAND            status, layout, decommission PEER, heal, info
  tessera admin scrub              start a scrub pass on every peer now
  tessera healthcheck [--url URL]  exit 0 when a health endpoint answers 200
  tessera sim [--rho 0.1,0.5 ...]  simulate the read schedulers
  tessera bench --endpoint ADDR    benchmark the read schedulers on a cluster
  tessera version                  print the version

Run "tessera COMMAND --help" for a command's flags. Every flag can also be
set with the environment variable TESSERA_<FLAG> (e.g. TESSERA_ADDRESS),
and server, peer and gateway read --config FILE (TOML or YAML) whose keys
are the flag names.
`

func main() {
	os.Exit(exitCode(run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// exitCode prints err and maps it to the process's exit code: 0 for
// success and for help asked for, 2 for a command line that cannot run,
// 1 (or an exitError's own) for a failure.
func exitCode(err error, stderr io.Writer) int {
	var ee *exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, "tessera:", ee.msg)
		}
		return ee.code
	case errors.Is(err, errUsage):
		if !errors.Is(err, errUsagePrinted) {
			fmt.Fprintln(stderr, err)
		}
		return 2
	default:
		fmt.Fprintln(stderr, "tessera:", err)
		return 1
	}
}

// errUsagePrinted is a usage error whose usage text is already out.
var errUsagePrinted = fmt.Errorf("%w: printed", errUsage)

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsagePrinted
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "server":
		return runServer(ctx, args[1:], stdout, stderr)
	case "peer":
		return runPeer(ctx, args[1:], stdout, stderr)
	case "gateway":
		return runGateway(ctx, args[1:], stdout, stderr)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], stdout)
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		return runVersion(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "tessera: unknown command %q\n\n%s", args[0], usage)
		return errUsagePrinted
	}
}

func runVersion(args []string, stdout io.Writer) error {
	c := newCommand("version", "version", "Prints the version.")
	pos, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := c.noArgs(pos); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "tessera", version)
	return nil
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

// crashAfterCommitsEnv makes a gateway exit the moment a write's commits
// landed on the peers of its first N shards, the others held back. For
// fault tests only: a gateway dying between the commits of one write.
const crashAfterCommitsEnv = "TESSERA_CRASH_AFTER_COMMITS"

func crashAfterCommitsFromEnv() (int, error) {
	v := os.Getenv(crashAfterCommitsEnv)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a shard count of at least 1", crashAfterCommitsEnv, v)
	}
	return n, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
