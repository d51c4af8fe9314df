package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// idleWatch is how long TestIdleLogsQuiet watches an idle server:
// TESSERA_IDLE_WATCH (a Go duration; .ci/run gives the full minute), else
// 10 s.
func idleWatch(t *testing.T) time.Duration {
	v := os.Getenv("TESSERA_IDLE_WATCH")
	if v == "" {
		return 10 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("TESSERA_IDLE_WATCH=%q: want a positive Go duration", v)
	}
	return d
}

// TestIdleLogsQuiet runs `tessera server` with nothing to do and wants
// a log with nothing above info and no membership change: an operator
// reads every warning, and an idle server has nothing to warn about.
func TestIdleLogsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("watches an idle server for TESSERA_IDLE_WATCH (10 s; 60 s in .ci/run)")
	}
	watch := idleWatch(t)
	p := startWebProc(t, "server", t.TempDir(), "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0", "--log-level", "info")
	p.logField(t, "gateway started", "web")
	time.Sleep(watch)
	n := checkQuietLog(t, p, "idle", 0)
	t.Logf("%d log lines in %v of idle running, none above info", n, watch)
}

// TestLoadedLogsNoMembershipChange drives `tessera server` with PUTs and
// GETs from 16 clients at once, as many as the two cores take, for the
// watch time, and wants no membership change and nothing above info in
// its log: the load that used to make in-process gossip members declare
// each other dead (thousands of false "member gone" lines) must not.
func TestLoadedLogsNoMembershipChange(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a server for TESSERA_IDLE_WATCH (10 s; 60 s in .ci/run)")
	}
	watch := idleWatch(t)
	p := startWebProc(t, "server", t.TempDir(), "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0", "--log-level", "info")
	s3 := p.logField(t, "gateway started", "s3")
	mc, _ := newMinio(t, s3, webAccessKey, webSecretKey)
	makeBucketSoon(t, mc, "load")
	p.mu.Lock()
	from := len(p.lines)
	p.mu.Unlock()
	ops := loadFor(t, mc, "load", 16, watch)
	n := checkQuietLog(t, p, "loaded", from)
	t.Logf("%d requests in %v from 16 clients; %d log lines meanwhile, none above info, no membership change", ops, watch, n)
}

// loadFor runs PUT then GET of 64 KiB to 1 MiB objects from clients
// goroutines for d and returns how many requests succeeded; any error
// fails t.
func loadFor(t *testing.T, mc *minio.Client, bucket string, clients int, d time.Duration) int64 {
	t.Helper()
	var ops atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("c%02d/%d", c, i%8)
				data := payload(int64(c*1000+i), 64<<10+(i%16)*60<<10)
				if _, err := mc.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
					if ctx.Err() == nil {
						t.Errorf("put %s: %v", key, err)
					}
					return
				}
				got, err := readAll(ctx, mc, bucket, key)
				if err != nil || !bytes.Equal(got, data) {
					if ctx.Err() == nil {
						t.Errorf("get %s: %v (%d bytes, want %d)", key, err, len(got), len(data))
					}
					return
				}
				ops.Add(2)
			}
		})
	}
	wg.Wait()
	return ops.Load()
}

func readAll(ctx context.Context, mc *minio.Client, bucket, key string) ([]byte, error) {
	o, err := mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(o)
}

// checkQuietLog fails t on any of p's log lines from index from on that
// is above info or reports a membership change, and returns how many
// lines it checked.
func checkQuietLog(t *testing.T, p *webProc, what string, from int) int {
	t.Helper()
	p.mu.Lock()
	lines := append([]map[string]any(nil), p.lines[from:]...)
	p.mu.Unlock()
	if p.cmd.ProcessState != nil {
		t.Fatalf("the %s server exited:\n%s", what, p.output())
	}
	for i, l := range lines {
		switch {
		case l == nil:
			t.Errorf("log line %d is not a JSON event", from+i+1)
		case l["level"] != "debug" && l["level"] != "info":
			t.Errorf("%s server logged at %v: %v", what, l["level"], l)
		case l["message"] == "member gone" || l["message"] == "member suspect" || (from > 0 && l["message"] == "member alive"):
			t.Errorf("%s server logged a membership change: %v", what, l)
		}
	}
	return len(lines)
}
