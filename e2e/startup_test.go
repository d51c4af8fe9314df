package e2e

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// attempt is one HTTP exchange of the start-up hammer, retries included.
type attempt struct {
	at     time.Time
	method string
	path   string
	status int
	code   string // S3 error code of an error answer
}

// recorder is a RoundTripper that keeps every answer the S3 endpoint
// gives, so client retries cannot hide a 4xx or a 503.
type recorder struct {
	tr *http.Transport
	mu sync.Mutex
	as []attempt
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.tr.RoundTrip(req)
	if err != nil {
		return nil, err // not listening yet: no answer to judge
	}
	a := attempt{at: time.Now(), method: req.Method, path: req.URL.Path, status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Code string }
		_ = xml.Unmarshal(body, &e)
		a.code = e.Code
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.as = append(r.as, a)
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) attempts() []attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]attempt(nil), r.as...)
}

// hammer writes through s3 from before it listens: one worker creates the
// bucket until that succeeds, then every worker PUTs small and staged
// objects in a loop. Meanwhile /health/ready on web is polled; ready is
// when it first answered 200.
type hammer struct {
	rec     *recorder
	mc      *minio.Client
	web     string
	ready   atomic.Pointer[time.Time]
	bucket  atomic.Bool
	puts    atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
	started time.Time
}

func startHammer(t *testing.T, s3, web, access, secret string) *hammer {
	t.Helper()
	h := &hammer{rec: &recorder{tr: &http.Transport{}}, web: web, stop: make(chan struct{}), started: time.Now()}
	mc, err := minio.New(s3, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Region: "us-east-1",
		Transport: h.rec, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	h.mc = mc
	h.wg.Add(1)
	go h.pollReady()
	for w := range 4 {
		h.wg.Add(1)
		go h.write(w)
	}
	t.Cleanup(h.close)
	return h
}

func (h *hammer) pollReady() {
	defer h.wg.Done()
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	for {
		select {
		case <-h.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := hc.Get("http://" + h.web + "/health/ready")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && h.ready.Load() == nil {
			now := time.Now()
			h.ready.Store(&now)
		}
	}
}

func (h *hammer) write(w int) {
	defer h.wg.Done()
	ctx := context.Background()
	for i := 0; ; i++ {
		select {
		case <-h.stop:
			return
		default:
		}
		if !h.bucket.Load() {
			if w == 0 {
				err := h.mc.MakeBucket(ctx, "startup", minio.MakeBucketOptions{})
				if err == nil || errCode(err) == "BucketAlreadyOwnedByYou" {
					h.bucket.Store(true)
				}
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		size := 1 << 10
		if i%4 == 3 {
			size = 1<<20 + 1 // staged through shard files, not inline
		}
		data := payload(int64(w*1000+i), size)
		_, err := h.mc.PutObject(ctx, "startup", fmt.Sprintf("w%d/%d", w, i), bytes.NewReader(data), int64(size), minio.PutObjectOptions{})
		if err == nil {
			h.puts.Add(1)
		}
	}
}

func (h *hammer) close() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	h.wg.Wait()
	h.rec.tr.CloseIdleConnections()
}

// check fails t for any 4xx answer (a bucket that already exists aside)
// and for any failed answer after /health/ready first said 200.
func (h *hammer) check(t *testing.T) {
	t.Helper()
	h.close()
	ready := h.ready.Load()
	if ready == nil {
		t.Fatal("/health/ready never answered 200")
	}
	counts := map[string]int{}
	bad := 0
	for _, a := range h.rec.attempts() {
		key := fmt.Sprintf("%s %d %s", a.method, a.status, a.code)
		counts[key]++
		switch {
		case a.code == "BucketAlreadyOwnedByYou":
		case a.status >= 400 && a.status < 500:
			bad++
			if bad <= 5 {
				t.Errorf("%v after start: %s %s answered %d %s", a.at.Sub(h.started).Round(time.Millisecond), a.method, a.path, a.status, a.code)
			}
		case a.status >= 300 && a.at.After(*ready):
			bad++
			if bad <= 5 {
				t.Errorf("%v after ready: %s %s answered %d %s", a.at.Sub(*ready).Round(time.Millisecond), a.method, a.path, a.status, a.code)
			}
		}
	}
	t.Logf("ready %v after start; %d PUTs succeeded; answers: %v", ready.Sub(h.started).Round(time.Millisecond), h.puts.Load(), counts)
	if bad > 5 {
		t.Errorf("... %d bad answers in all", bad)
	}
	if h.puts.Load() == 0 {
		t.Error("no PUT succeeded")
	}
}

// runFor hammers until d after ready, or fails t if ready takes over limit.
func (h *hammer) runFor(t *testing.T, d, limit time.Duration) {
	t.Helper()
	waitUntil(t, limit, "/health/ready answers 200", func() bool { return h.ready.Load() != nil })
	time.Sleep(d)
}

// TestStartupServerWrites hammers `tessera server` with PUTs from the
// moment its process starts: no answer is a 4xx (before the peers are up,
// writes get a retryable 503), and once /health/ready says 200 every
// write succeeds.
func TestStartupServerWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a tessera process; run without -short")
	}
	const access, secret = "STARTUPKEY", "startup-secret-key"
	s3, web := freeAddr(t), freeAddr(t)
	cmd := exec.Command(tesseraBinary(t), "server", filepath.Join(t.TempDir(), "data"),
		"--address", s3, "--web-address", web, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY="+access, "TESSERA_SECRET_KEY="+secret)
	cmd.Stderr = os.Stderr
	h := startHammer(t, s3, web, access, secret)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCmd(cmd) })
	h.runFor(t, 3*time.Second, 60*time.Second)
	h.check(t)
}

// TestStartupClusterWrites is TestStartupServerWrites on a gateway and
// six peer processes, whose ring epochs are minted while the writes run.
func TestStartupClusterWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts seven tessera processes; run without -short")
	}
	c := newProcCluster(t)
	gw := c.startGateway()
	h := startHammer(t, gw.api, gw.web, c.access, c.secret)
	for range 6 {
		c.startPeer()
	}
	h.runFor(t, 0, 60*time.Second)
	c.waitEpoch(6)
	time.Sleep(3 * time.Second)
	h.check(t)
}

// stopCmd interrupts cmd and waits for it, killing it after 20 s.
func stopCmd(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
