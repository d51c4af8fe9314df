package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

const adminUsage = `Usage: tessera admin COMMAND [flags]

Commands, each through a gateway's authenticated admin API (--endpoint,
default 127.0.0.1:9000, with TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY):
  status                    nodes, states, capacity, the ring epoch, whether data
                            moves, repair, rebalance and scrub progress
  layout [show]             the ring per peer (vnodes, share s, weight w, P = s/w)
                            and the pending change
  layout mode manual|auto   manual: joins, capacity changes and decommissions
                            wait for 'layout apply'; auto (the default): they
                            apply by themselves
  layout apply              apply the pending change (manual mode)
  decommission PEER         drain a peer (its ID, an ID prefix, or its shard API
                            host:port), then take it off the ring
  scrub                     start a deep scrub pass on every peer now
  heal BUCKET[/PREFIX]      repair every object under the prefix now
  info BUCKET               objects, bytes, storage classes and configuration

Tables by default; --json for machines. Run 'tessera admin COMMAND --help'
for a command's flags.
`

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return errUsagePrinted
	}
	if run, ok := adminCommands[args[0]]; ok {
		return run(ctx, args[1:], stdout)
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, adminUsage)
		return flag.ErrHelp
	}
	fmt.Fprintf(stderr, "tessera admin: unknown command %q\n\n%s", args[0], adminUsage)
	return errUsagePrinted
}

// adminCommands are the subcommands of `tessera admin`.
var adminCommands = map[string]func(ctx context.Context, args []string, stdout io.Writer) error{
	"status":       runAdminStatus,
	"layout":       runAdminLayout,
	"decommission": runAdminDecommission,
	"scrub":        runAdminScrub,
	"heal":         runAdminHeal,
	"info":         runAdminInfo,
}
