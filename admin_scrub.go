package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"tessera/gateway"
)

// emptySHA256 is the payload hash of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// runAdminScrub starts a scrub pass on every alive peer through a
// gateway's admin API, and with --wait waits for the passes to finish and
// their findings to be repaired.
func runAdminScrub(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("admin scrub", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "127.0.0.1:9000", "a gateway's S3 endpoint, host:port or URL")
	wait := fs.Duration("wait", 0, "wait up to this long for every pass to finish and its findings to be repaired (0: do not wait)")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := newAdminClient(*endpoint)
	if err != nil {
		return err
	}
	start, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var started gateway.ScrubReply
	if err := c.do(start, http.MethodPost, "scrub", &started); err != nil {
		return err
	}
	accepted := map[string]time.Time{}
	var failed []string
	for _, p := range started.Peers {
		if p.Accepted == nil {
			failed = append(failed, p.Peer+": "+p.Error)
			continue
		}
		accepted[p.Peer] = *p.Accepted
	}
	fmt.Fprintf(stdout, "scrub started on %d peers\n", len(accepted))
	if len(failed) > 0 {
		return fmt.Errorf("admin scrub: not started on %s", strings.Join(failed, "; "))
	}
	if *wait <= 0 {
		return nil
	}
	ctx, cancel = context.WithTimeout(ctx, *wait)
	defer cancel()
	return waitScrub(ctx, c, accepted, stdout)
}

// waitScrub polls until every peer in accepted finished a pass begun after
// its time and holds no unrepaired finding: each damaged copy it found was
// rewritten and verified again.
func waitScrub(ctx context.Context, c *adminClient, accepted map[string]time.Time, stdout io.Writer) error {
	for {
		var st gateway.ScrubReply
		err := c.do(ctx, http.MethodGet, "scrub", &st)
		if err == nil && scrubDone(st, accepted) {
			var objects, shards, corrupt int64
			for _, p := range st.Peers {
				objects += p.Report.Last.ObjectsChecked
				shards += p.Report.Last.ShardsChecked
				corrupt += p.Report.Last.Corrupt
			}
			fmt.Fprintf(stdout, "scrub finished: %d objects and %d shards checked, %d damaged copies found, all repaired\n",
				objects, shards, corrupt)
			return nil
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("admin scrub: waiting for the passes: %w (last poll: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
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

// adminClient signs admin API calls with the S3 credentials.
type adminClient struct {
	base, access, secret, region string
}

func newAdminClient(endpoint string) (*adminClient, error) {
	c := &adminClient{base: strings.TrimRight(endpoint, "/"), access: os.Getenv("TESSERA_ACCESS_KEY"),
		secret: os.Getenv("TESSERA_SECRET_KEY"), region: envOr("TESSERA_REGION", "us-east-1")}
	if !strings.Contains(c.base, "://") {
		c.base = "http://" + c.base
	}
	if c.access == "" || c.secret == "" {
		return nil, errors.New("admin: TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY must be set")
	}
	return c, nil
}

func (c *adminClient) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+gateway.AdminPrefix+path, nil)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	req = signer.SignV4(*req, c.access, c.secret, "", c.region)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("admin: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("admin: %s %s: decode: %w", method, path, err)
	}
	return nil
}
