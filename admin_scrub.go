package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"tessera/gateway"
)

// runAdminScrub starts a scrub pass on every alive peer through a
// gateway's admin API, and with --wait waits for the passes to finish and
// their findings to be repaired.
func runAdminScrub(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("scrub", "scrub [flags]",
		"Starts a deep scrub pass on every alive peer now: each reads and verifies every\n"+
			"shard and record it holds (at its --scrub-rate), and the gateways repair what\n"+
			"fails. --wait waits for every pass to finish and every finding to be repaired.")
	wait := cmd.fs.Duration("wait", 0, "wait up to this long for every pass to finish and its findings to be repaired (0: do not wait)")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.noArgs(pos); err != nil {
		return err
	}
	c, err := cmd.client()
	if err != nil {
		return err
	}
	start, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var started gateway.ScrubReply
	if err := c.do(start, http.MethodPost, "scrub", nil, &started); err != nil {
		return err
	}
	accepted, failed := acceptedScrubs(started)
	if !*cmd.asJSON {
		fmt.Fprintf(stdout, "scrub started on %d peers\n", len(accepted))
	}
	if len(failed) > 0 {
		return fmt.Errorf("admin scrub: not started on %s", strings.Join(failed, "; "))
	}
	if *wait <= 0 {
		return printJSONIf(*cmd.asJSON, stdout, started)
	}
	ctx, cancel = context.WithTimeout(ctx, *wait)
	defer cancel()
	st, err := waitScrub(ctx, c, accepted)
	if err != nil {
		return err
	}
	if *cmd.asJSON {
		return printJSON(stdout, st)
	}
	renderScrubDone(stdout, st)
	return nil
}

// renderScrubDone sums the passes every peer just finished.
func renderScrubDone(w io.Writer, st gateway.ScrubReply) {
	var objects, shards, corrupt int64
	for _, p := range st.Peers {
		if p.Report == nil || p.Report.Last == nil {
			continue
		}
		objects += p.Report.Last.ObjectsChecked
		shards += p.Report.Last.ShardsChecked
		corrupt += p.Report.Last.Corrupt
	}
	fmt.Fprintf(w, "scrub finished: %d objects and %d shards checked, %d damaged copies found, all repaired\n",
		objects, shards, corrupt)
}

// acceptedScrubs splits the peers' answers into the time each accepted
// the request at and the refusals.
func acceptedScrubs(r gateway.ScrubReply) (map[string]time.Time, []string) {
	accepted := map[string]time.Time{}
	var failed []string
	for _, p := range r.Peers {
		if p.Accepted == nil {
			failed = append(failed, p.Peer+": "+p.Error)
			continue
		}
		accepted[p.Peer] = *p.Accepted
	}
	return accepted, failed
}

// waitScrub polls until every peer in accepted finished a pass begun after
// its time and holds no unrepaired finding: each damaged copy it found was
// rewritten and verified again.
func waitScrub(ctx context.Context, c *adminClient, accepted map[string]time.Time) (gateway.ScrubReply, error) {
	var st gateway.ScrubReply
	err := poll(ctx, time.Second, func() (bool, error) {
		st = gateway.ScrubReply{}
		if err := c.do(ctx, http.MethodGet, "scrub", nil, &st); err != nil {
			return false, err
		}
		return scrubDone(st, accepted), nil
	})
	if err != nil {
		return st, fmt.Errorf("admin scrub: waiting for the passes: %w", err)
	}
	return st, nil
}

func scrubDone(st gateway.ScrubReply, accepted map[string]time.Time) bool {
	seen := 0
	for _, p := range st.Peers {
		at, ok := accepted[p.Peer]
		if !ok {
			continue
		}
		if p.Report == nil || !p.Report.Done(at) {
			return false
		}
		seen++
	}
	return seen == len(accepted)
}
