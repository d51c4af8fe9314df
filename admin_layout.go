package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"tessera/gateway"
)

const layoutAbout = `Shows the ring: per peer its virtual nodes, its share s of the hash circle,
its weight w (capacity as a fraction of all), and P = s/w, which the
balancer keeps near 1; and the pending change, the layout the peers call
for that is not in force yet.

  layout [show]            the ring and the pending change
  layout mode manual|auto  manual: joins, capacity changes and decommissions
                           only become pending, until 'layout apply'; auto
                           (the default): the peers apply them by themselves
  layout apply             apply the pending change now (manual mode)

The mode is part of the ring's layout record, so every node agrees on it;
switching it is a new epoch with the same placement.`

func runAdminLayout(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("layout", "layout [show | mode manual|auto | apply] [flags]", layoutAbout)
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	method, path, q, err := layoutCall(pos)
	if err != nil {
		return cmd.usage(err)
	}
	return show(ctx, cmd, stdout, method, path, q, renderLayout)
}

// layoutCall maps the layout subcommand's words to its API call.
func layoutCall(pos []string) (method, path string, q url.Values, err error) {
	switch {
	case len(pos) == 0 || (len(pos) == 1 && pos[0] == "show"):
		return http.MethodGet, "layout", nil, nil
	case len(pos) == 2 && pos[0] == "mode" && (pos[1] == gateway.LayoutManual || pos[1] == gateway.LayoutAuto):
		return http.MethodPut, "layout", url.Values{"mode": {pos[1]}}, nil
	case len(pos) == 1 && pos[0] == "apply":
		return http.MethodPost, "layout/apply", nil, nil
	case len(pos) >= 1 && pos[0] == "mode":
		return "", "", nil, fmt.Errorf("layout mode takes manual or auto, got %q", pos[1:])
	}
	return "", "", nil, fmt.Errorf("unknown layout command %q: want show, mode manual|auto, or apply", pos)
}

// renderLayout draws the ring per peer and the pending change.
func renderLayout(w io.Writer, rep gateway.LayoutReply) {
	if rep.Mode == gateway.LayoutMembership {
		fmt.Fprintf(w, "No ring epoch: the ring is every peer seen, weight 1 (%s)\n", plural(len(rep.Peers), "peer"))
	} else {
		fmt.Fprintf(w, "Ring epoch %d, %s mode, %s; %s\n", rep.Epoch, rep.Mode, plural(len(rep.Peers), "peer"), balanceGoal(rep.RingWidth))
	}
	if rep.Moving {
		fmt.Fprintf(w, "Data is moving to it (settled at epoch %d; %s still read)\n", rep.Settled, plural(rep.OlderLayouts, "older layout"))
	}
	fmt.Fprintln(w)
	// An epoch weighs peers by capacity in GiB; the membership ring
	// weighs each 1.
	raw := "CAPACITY GiB"
	if rep.Mode == gateway.LayoutMembership {
		raw = "WEIGHT"
	}
	tw := newTable(w)
	row(tw, "PEER", "STATE", "ZONE", raw, "VNODES", "SHARE s", "WEIGHT w", "P = s/w")
	var vnodes int
	var share, weight float64
	for _, p := range rep.Peers {
		pv := "-"
		if p.P != nil {
			pv = fmt.Sprintf("%.3f", *p.P)
		}
		row(tw, p.ID, orDash(p.State), orDash(p.Zone), trimFloat(p.Capacity), strconv.Itoa(p.Vnodes),
			fmt.Sprintf("%.4f", p.Share), fmt.Sprintf("%.4f", p.Weight), pv)
		vnodes, share, weight = vnodes+p.Vnodes, share+p.Share, weight+p.Weight
	}
	row(tw, "total", "", "", "", strconv.Itoa(vnodes), fmt.Sprintf("%.4f", share), fmt.Sprintf("%.4f", weight))
	tw.Flush()
	renderPending(w, rep)
}

func renderPending(w io.Writer, rep gateway.LayoutReply) {
	if rep.Pending == nil || len(rep.Pending.Peers) == 0 {
		fmt.Fprintln(w, "\nNo pending change.")
		return
	}
	if rep.Mode == gateway.LayoutManual {
		fmt.Fprintf(w, "\nPending change, epoch %d once applied (tessera admin layout apply):\n", rep.Pending.Epoch)
	} else {
		fmt.Fprintf(w, "\nPending change, epoch %d once the peers have been still a moment:\n", rep.Pending.Epoch)
	}
	tw := newTable(w)
	for _, c := range rep.Pending.Peers {
		row(tw, "  "+c.ID, c.Kind, weightChange(c.From, c.To))
	}
	tw.Flush()
}

// weightChange describes one peer's entry before and after.
func weightChange(from, to *gateway.LayoutWeight) string {
	switch {
	case from == nil && to != nil:
		return fmt.Sprintf("capacity %s, %d vnodes", trimFloat(to.Capacity), to.Vnodes)
	case to == nil && from != nil:
		return fmt.Sprintf("off the ring (had %d vnodes)", from.Vnodes)
	case from == nil || to == nil:
		return ""
	}
	s := fmt.Sprintf("vnodes %d -> %d", from.Vnodes, to.Vnodes)
	if from.Capacity != to.Capacity {
		s += fmt.Sprintf(", capacity %s -> %s", trimFloat(from.Capacity), trimFloat(to.Capacity))
	}
	if from.Zone != to.Zone {
		s += fmt.Sprintf(", zone %s -> %s", orDash(from.Zone), orDash(to.Zone))
	}
	return s
}

// balanceGoal says what the proposer balances.
func balanceGoal(width int) string {
	if width > 1 {
		return fmt.Sprintf("balancing stored shards for objects of %d shards", width)
	}
	return "balancing first-choice shares"
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
