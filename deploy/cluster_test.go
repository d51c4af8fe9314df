package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

const (
	testAccess = "deployaccess"
	testSecret = "deploysecret-0123456789"
)

// cluster is one gateway and three peers, separate processes on loopback,
// coding objects 2+1; every process serves /metrics.
type cluster struct {
	s3   string
	webs []string // the gateway's, then each peer's
}

var (
	portsMu sync.Mutex
	ports   = map[int]bool{}
)

// freeAddr returns a loopback host:port free for TCP and UDP a moment ago,
// never the same twice in this test binary. Ports come from below the
// kernel's ephemeral range, so no outgoing connection takes one meanwhile.
func freeAddr(t *testing.T) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := 20000 + rand.IntN(12000)
		if ports[p] {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		tl, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ul, err := net.ListenPacket("udp", addr)
		tl.Close()
		if err != nil {
			continue
		}
		ul.Close()
		ports[p] = true
		return addr
	}
	t.Fatal("no free port")
	return ""
}

// startCluster starts the processes and waits for the gateway to be ready.
// The peers scrub every 6 s at 8 objects/s, so that passes run while the
// test scrapes.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bin, dir := tesseraBin(t), t.TempDir()
	env := append(os.Environ(), "TESSERA_ACCESS_KEY="+testAccess, "TESSERA_SECRET_KEY="+testSecret,
		"TESSERA_CLUSTER_SECRET=deploy-test-cluster-secret")
	c := &cluster{s3: freeAddr(t)}
	gossip, gwWeb := freeAddr(t), freeAddr(t)
	c.webs = append(c.webs, gwWeb)
	start(t, bin, env, filepath.Join(dir, "gateway.log"), "gateway", "--address", c.s3, "--web-address", gwWeb,
		"--bind", gossip, "--ec", "2+1", "--gossip-timing", "fast", "--log-format", "json")
	for i := 1; i <= 3; i++ {
		web := freeAddr(t)
		c.webs = append(c.webs, web)
		name := fmt.Sprintf("peer%d", i)
		start(t, bin, env, filepath.Join(dir, name+".log"), "peer", filepath.Join(dir, name),
			"--address", freeAddr(t), "--bind", freeAddr(t), "--join", gossip, "--web-address", web,
			"--gossip-timing", "fast", "--scrub-interval", "6s", "--scrub-objects-rate", "8", "--log-format", "json")
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, w := range c.webs {
		for {
			code, _, err := get("http://" + w + "/health/ready")
			if err == nil && code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready after 60 s: %d %v (logs in %s)", w, code, err, dir)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return c
}

// start runs one tessera process until the test ends; on failure its log
// is shown.
func start(t *testing.T, bin string, env []string, logPath string, args ...string) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s (tail):\n%s", filepath.Base(logPath), b)
		}
	})
}

func get(url string) (int, []byte, error) {
	hc := http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// load puts n objects and reads each back, so S3, scheduler and scrub
// figures have something to count.
func (c *cluster) load(t *testing.T, n int) {
	t.Helper()
	mc, err := minio.New(c.s3, &minio.Options{Creds: credentials.NewStaticV4(testAccess, testSecret, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		err := mc.MakeBucket(ctx, "metrics", minio.MakeBucketOptions{})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("make bucket: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := range n {
		body := bytes.Repeat([]byte{byte(i)}, 1000+i*5000)
		key := fmt.Sprintf("obj/%03d", i)
		if _, err := mc.PutObject(ctx, "metrics", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		obj, err := mc.GetObject(ctx, "metrics", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("get %s: %d bytes back (%v), want %d", key, len(got), err, len(body))
		}
	}
}

// scrapeUntil scrapes every process's /metrics until all of want have
// appeared or 45 s passed, and returns every name seen.
func (c *cluster) scrapeUntil(t *testing.T, want map[string]bool) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(45 * time.Second)
	for {
		for _, w := range c.webs {
			code, body, err := get("http://" + w + "/metrics")
			if err != nil || code != http.StatusOK {
				t.Fatalf("scrape %s: %d %v", w, code, err)
			}
			for n := range sampleNames(body) {
				seen[n] = true
			}
		}
		all := true
		for n := range want {
			all = all && seen[n]
		}
		if all || time.Now().After(deadline) {
			return seen
		}
		time.Sleep(250 * time.Millisecond)
	}
}
