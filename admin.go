package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"tessera/peer"
)

const adminUsage = `Usage:
  tessera admin decommission PEER   drain a storage peer, then take it off the ring
  tessera admin scrub [--endpoint HOST:PORT] [--wait 1h]
                                    start a scrub pass on every peer now

decommission: PEER is the peer's shard API address (host:port, its
--address). The cluster secret comes from TESSERA_CLUSTER_SECRET. The
peer's data moves to the others while it keeps serving; once it holds
nothing it leaves the ring and can be stopped.

scrub: every alive peer starts a pass now that reads and verifies every
shard and record it holds (at its --scrub-rate); the gateways repair what
fails. The call goes to a gateway's admin API (--endpoint, its S3
address) with TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY; --wait waits for
every pass to finish and every finding to be repaired.
`

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "scrub" {
		return runAdminScrub(ctx, args[1:], stdout)
	}
	if len(args) == 0 || args[0] != "decommission" {
		fmt.Fprint(stderr, adminUsage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("admin decommission", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the peer to answer")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("admin decommission: exactly one PEER address is required")
	}
	secret := os.Getenv("TESSERA_CLUSTER_SECRET")
	if secret == "" {
		return errors.New("admin: TESSERA_CLUSTER_SECRET must be set")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	certs, err := peer.NewTLS([]byte(secret))
	if err != nil {
		return fmt.Errorf("admin decommission: %w", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: certs.Client}}
	c := peer.NewClient(peer.ClientConfig{BaseURL: "https://" + pos[0], Secret: []byte(secret), HTTP: hc})
	defer c.CloseIdleConnections()
	if err := c.Drain(ctx); err != nil {
		return fmt.Errorf("admin decommission %s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "peer %s is draining; it leaves the ring once its data has moved\n", pos[0])
	return nil
}
