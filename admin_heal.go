package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tessera/gateway"
)

const healAbout = `Repairs every object under BUCKET/PREFIX now, rather than when the
background scanner next reaches it: each object's records are compared on
its peers and, unless --quick, every shard's bytes are read and verified,
so a shard lost or rotted under an intact record is rebuilt too. The job
runs in the gateway; --wait waits for it and reports the counts, and
--job ID reports (or with --wait, waits for) a job started before.`

func runAdminHeal(ctx context.Context, args []string, stdout io.Writer) error {
	cmd := newAdminCommand("heal", "heal BUCKET[/PREFIX] [flags] | heal --job ID [flags]", healAbout)
	quick := cmd.fs.Bool("quick", false, "compare records only, trusting shard files (what the background scanner does)")
	wait := cmd.fs.Duration("wait", 0, "wait up to this long for the job to finish (0: do not wait)")
	job := cmd.fs.String("job", "", "report the job of this `ID` instead of starting one")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if *job == "" {
		err = cmd.args(pos, 1, 1, "BUCKET[/PREFIX]")
	} else {
		err = cmd.args(pos, 0, 0, "no BUCKET with --job")
	}
	if err != nil {
		return err
	}
	c, err := cmd.client()
	if err != nil {
		return err
	}
	st, err := startOrFindHeal(ctx, c, *job, pos, *quick)
	if err != nil {
		return err
	}
	if *wait > 0 && st.Finished == nil {
		ctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		if st, err = waitHeal(ctx, c, st.ID); err != nil {
			return fmt.Errorf("admin heal: waiting for job %s: %w", st.ID, err)
		}
	}
	if *cmd.asJSON {
		if err := printJSON(stdout, st); err != nil {
			return err
		}
	} else {
		renderHeal(stdout, st)
	}
	return healOutcome(st)
}

// startOrFindHeal starts a job over pos[0] (BUCKET[/PREFIX]), or with job
// set asks for that one.
func startOrFindHeal(ctx context.Context, c *adminClient, job string, pos []string, quick bool) (gateway.HealStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var st gateway.HealStatus
	if job != "" {
		return st, c.do(ctx, http.MethodGet, "heal", url.Values{"id": {job}}, &st)
	}
	bucket, prefix, _ := strings.Cut(pos[0], "/")
	q := url.Values{"bucket": {bucket}, "prefix": {prefix}, "quick": {strconv.FormatBool(quick)}}
	return st, c.do(ctx, http.MethodPost, "heal", q, &st)
}

func waitHeal(ctx context.Context, c *adminClient, id string) (gateway.HealStatus, error) {
	st := gateway.HealStatus{ID: id}
	err := poll(ctx, 500*time.Millisecond, func() (bool, error) {
		var now gateway.HealStatus
		if err := c.do(ctx, http.MethodGet, "heal", url.Values{"id": {id}}, &now); err != nil {
			return false, err
		}
		st = now
		return st.Finished != nil, nil
	})
	return st, err
}

// healOutcome fails a finished job that left objects unrepaired, so a
// script sees it in the exit code.
func healOutcome(st gateway.HealStatus) error {
	switch {
	case st.Finished == nil:
		return nil
	case st.Error != "":
		return fmt.Errorf("admin heal: job %s stopped: %s", st.ID, st.Error)
	case st.Failed > 0:
		return fmt.Errorf("admin heal: job %s: %d of %d objects could not be repaired now", st.ID, st.Failed, st.Objects)
	}
	return nil
}

// renderHeal reports a job: running, or its counts.
func renderHeal(w io.Writer, st gateway.HealStatus) {
	what := st.Bucket + "/" + st.Prefix
	mode := "records and shard bytes"
	if st.Quick {
		mode = "records only"
	}
	if st.Finished == nil {
		fmt.Fprintf(w, "heal job %s of %s (%s) running: %d objects examined so far; follow it with 'tessera admin heal --job %s --wait 1h'\n",
			st.ID, what, mode, st.Objects, st.ID)
		return
	}
	fmt.Fprintf(w, "heal job %s of %s (%s) finished in %s: %d objects examined, %d healthy, %d repaired (%s rewritten), %d failed\n",
		st.ID, what, mode, st.Finished.Sub(st.Started).Round(time.Millisecond), st.Objects, st.Healthy, st.Repaired,
		plural(int(st.Shards), "shard"), st.Failed)
	for _, e := range st.Errors {
		fmt.Fprintf(w, "  %s\n", e)
	}
}
