package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"tessera/gateway"
	"tessera/meta"
	"tessera/peer"
)

const decommissionAbout = `Drains a storage peer, then takes it off the ring: the next epoch gives it
weight 0, its data moves to the others while it keeps serving, and once it
holds nothing it leaves the ring and can be stopped. In manual layout mode
each of those steps waits for 'tessera admin layout apply'.

PEER is the peer's ID (as 'tessera admin status' lists it), a prefix of
exactly one ID, or its shard API host:port; the gateway resolves it from
its membership view. Given as host:port with TESSERA_CLUSTER_SECRET set and
no --endpoint, the call goes straight to the peer's shard API instead, as
it did before the admin API could resolve peers.`

func runAdminDecommission(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("decommission", "decommission PEER [flags]", decommissionAbout)
	cmd.env = append(cmd.env, "TESSERA_CLUSTER_SECRET   the cluster secret, for a call straight to host:port")
	wait := cmd.fs.Duration("wait", 0, "wait up to this long for the peer to leave the ring with its data moved (0: do not wait)")
	timeout := cmd.fs.Duration("timeout", 30*time.Second, "how long to wait for the gateway, or the peer itself, to answer")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.args(pos, 1, 1, "one PEER"); err != nil {
		return err
	}
	target := pos[0]
	if direct(target, cmd.given("endpoint")) {
		if *wait > 0 {
			return cmd.usage(errors.New("--wait polls a gateway: give --endpoint to go through one"))
		}
		return drainDirect(ctx, target, *timeout, stdout)
	}
	c, err := cmd.client()
	if err != nil {
		return err
	}
	rep, err := requestDrain(ctx, c, target, *timeout, *cmd.asJSON, stdout)
	if err != nil {
		return err
	}
	if *wait <= 0 {
		return printJSONIf(*cmd.asJSON, stdout, rep)
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	lay, err := waitOffRing(ctx, c, rep.Peer)
	if err != nil {
		return fmt.Errorf("admin decommission: waiting for %s to leave the ring: %w", rep.Peer, err)
	}
	if *cmd.asJSON {
		return printJSON(stdout, lay)
	}
	fmt.Fprintf(stdout, "peer %s is off the ring (epoch %d) and its data has moved; it can be stopped\n", rep.Peer, lay.Epoch)
	return nil
}

// requestDrain asks the gateway to drain target and, unless asJSON, says
// what happens next: in manual layout mode nothing moves until applied.
func requestDrain(ctx context.Context, c *adminClient, target string, timeout time.Duration, asJSON bool, stdout io.Writer) (gateway.DecommissionReply, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rep gateway.DecommissionReply
	if err := c.do(ctx, http.MethodPost, "decommission", url.Values{"peer": {target}}, &rep); err != nil {
		return rep, err
	}
	var lay gateway.LayoutReply
	if err := c.do(ctx, http.MethodGet, "layout", nil, &lay); err != nil {
		return rep, err
	}
	if !asJSON {
		fmt.Fprintf(stdout, "peer %s (%s) is draining; it leaves the ring once its data has moved\n", rep.Peer, rep.Address)
		if lay.Mode == gateway.LayoutManual {
			fmt.Fprintln(stdout, "the layout mode is manual: run 'tessera admin layout apply' to start moving its data, and again to take it off the ring")
		}
	}
	return rep, nil
}

// direct reports whether the call goes straight to the peer: it is named
// by host:port, the cluster secret is at hand and no gateway was named.
func direct(target string, endpointGiven bool) bool {
	_, port, err := net.SplitHostPort(target)
	if err != nil || endpointGiven || os.Getenv("TESSERA_CLUSTER_SECRET") == "" {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

// waitOffRing polls the layout until the peer is not on the ring and no
// data moves.
func waitOffRing(ctx context.Context, c *adminClient, id string) (gateway.LayoutReply, error) {
	var lay gateway.LayoutReply
	err := poll(ctx, layoutWaitEvery, func() (bool, error) {
		lay = gateway.LayoutReply{}
		if err := c.do(ctx, http.MethodGet, "layout", nil, &lay); err != nil {
			return false, err
		}
		return !onRing(lay, id) && !lay.Moving, nil
	})
	return lay, err
}

// drainDirect asks the peer at addr over its shard API to drain.
func drainDirect(ctx context.Context, addr string, timeout time.Duration, stdout io.Writer) error {
	secret := os.Getenv("TESSERA_CLUSTER_SECRET")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certs, err := peer.NewTLS([]byte(secret))
	if err != nil {
		return fmt.Errorf("admin decommission: %w", err)
	}
	tr := &http.Transport{TLSClientConfig: certs.Client}
	defer tr.CloseIdleConnections()
	c := peer.NewClient(peer.ClientConfig{ID: meta.PeerID(addr), BaseURL: "https://" + addr, Secret: []byte(secret),
		HTTP: &http.Client{Transport: tr}})
	if err := c.Drain(ctx); err != nil {
		return fmt.Errorf("admin decommission: %w", err)
	}
	fmt.Fprintf(stdout, "peer %s is draining; it leaves the ring once its data has moved\n", addr)
	return nil
}

// layoutWaitEvery is how often a wait polls the layout.
const layoutWaitEvery = time.Second

// onRing reports whether the ring lists peer id, with tokens or not.
func onRing(rep gateway.LayoutReply, id string) bool {
	for _, p := range rep.Peers {
		if p.ID == id {
			return true
		}
	}
	return false
}
