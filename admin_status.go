package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"tessera/gateway"
)

// callTimeout bounds one admin API call.
const callTimeout = 2 * time.Minute

func runAdminStatus(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("status", "status [flags]",
		"Shows the cluster as a gateway sees it: every node with its role, state,\n"+
			"zone and capacity; the ring epoch, its layout mode and whether data is\n"+
			"still moving to it; and the progress of repair, rebalance and scrub.")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.noArgs(pos); err != nil {
		return err
	}
	return show(ctx, cmd, stdout, http.MethodGet, "status", nil, func(w io.Writer, st gateway.ClusterStatus) {
		renderStatus(w, st, time.Now())
	})
}

// renderStatus draws the status as a headline, a table of nodes and one
// line per background job.
func renderStatus(w io.Writer, st gateway.ClusterStatus, now time.Time) {
	head := "Gateway " + st.Gateway
	if st.Version != "" {
		head += " (tessera " + st.Version + ")"
	}
	fmt.Fprintf(w, "%s, default code %s\n", head, st.Code)
	fmt.Fprintf(w, "Ring:      %s\n\n", ringLine(st.Ring))
	tw := newTable(w)
	row(tw, "ID", "ROLE", "STATE", "SINCE", "ADDRESS", "ZONE", "CAPACITY", "USED", "FREE", "VNODES")
	for _, n := range st.Nodes {
		capacity, used, free, vnodes := "-", "-", "-", "-"
		if n.Role == "peer" {
			capacity, free, vnodes = humanBytes(n.CapacityBytes), humanBytes(n.FreeBytes), strconv.Itoa(n.Vnodes)
			used = humanBytes(n.CapacityBytes - min(n.FreeBytes, n.CapacityBytes))
		}
		row(tw, n.ID, n.Role, nodeState(n), age(now, n.Since), orDash(n.Address), orDash(n.Zone), capacity, used, free, vnodes)
	}
	tw.Flush()
	r, m, s := st.Repair, st.Rebalance, st.Scrub
	fmt.Fprintf(w, "\nRepair:    %d pending, %d repaired, %d failed (%s of the scanner)\n",
		r.Pending, r.Repaired, r.Failed, plural(int(r.ScanPasses), "pass"))
	moving := "idle"
	if m.Running {
		moving = fmt.Sprintf("moving data to epoch %d", m.Target)
	}
	fmt.Fprintf(w, "Rebalance: %s; %d objects (%s) moved, %d failed, by this gateway\n", moving, m.Objects, humanBytes(m.Bytes), m.Failed)
	last := "no pass finished yet"
	if s.LastFinished != nil {
		last = "oldest last pass " + age(now, *s.LastFinished) + " ago"
	}
	fmt.Fprintf(w, "Scrub:     %s reporting, %d running; %s; %d damaged copies found, %d repaired, %d pending\n",
		plural(s.Peers, "peer"), s.Running, last, s.CorruptFound, s.Repaired, s.Pending)
}

// ringLine is the ring in one line: epoch and mode, size, and movement.
func ringLine(r gateway.RingSummary) string {
	var s string
	if r.Mode == gateway.LayoutMembership {
		s = fmt.Sprintf("no epoch (every peer seen, weight 1), %s, %d vnodes", plural(r.Peers, "peer"), r.Vnodes)
	} else {
		s = fmt.Sprintf("epoch %d, %s mode, %s, %d vnodes", r.Epoch, r.Mode, plural(r.Peers, "peer"), r.Vnodes)
	}
	switch {
	case r.Moving:
		s += fmt.Sprintf("; data moving (settled at epoch %d, %s still read)", r.Settled, plural(r.OlderLayouts, "older layout"))
	case r.Epoch > 0:
		s += "; data in place"
	}
	if r.PendingChanges > 0 {
		s += fmt.Sprintf("; %s pending (tessera admin layout)", plural(r.PendingChanges, "peer change"))
	}
	return s
}

// nodeState is the state with the flags an operator must act on.
func nodeState(n gateway.AdminNode) string {
	s := n.State
	if n.Draining {
		s += ",draining"
	}
	if n.DiskFull {
		s += ",disk-full"
	}
	return s
}
