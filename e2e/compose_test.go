package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// composeProject runs the repository's docker-compose.yml under a unique
// project name, with the image built from the repository's Dockerfile.
type composeProject struct {
	t    *testing.T
	name string
	env  []string
	root string
}

func (p *composeProject) run(args ...string) (string, error) {
	cmd := exec.Command("docker-compose", append([]string{"-f", filepath.Join(p.root, "docker-compose.yml"), "-p", p.name}, args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (p *composeProject) must(args ...string) {
	p.t.Helper()
	if out, err := p.run(args...); err != nil {
		p.t.Fatalf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func docker(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	_, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return n
}

// buildImage builds the static binary and the FROM-scratch image.
func buildImage(t *testing.T, root, tag string) {
	t.Helper()
	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "tessera"), ".")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644); err != nil {
		t.Fatal(err)
	}
	docker(t, "build", "-q", "-t", tag, ctxDir)
}

// TestDockerCompose brings up one gateway and six peer containers from the
// project's image, writes objects, kills two peer containers and reads
// everything back, then cuts a third peer off the network and shows the
// cluster keeps serving reads and writes.
func TestDockerCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs seven containers; run without -short")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine reachable (docker info failed); this test needs one")
	}
	if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Skip("docker-compose not installed (Debian package docker-compose)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("tesserae2e%d", time.Now().UnixNano()%1e9)
	tag := "tessera:" + name
	buildImage(t, root, tag)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	s3Port, webPort := freePort(t), freePort(t)
	p := &composeProject{t: t, name: name, root: root, env: []string{
		"TESSERA_IMAGE=" + tag, fmt.Sprintf("TESSERA_S3_PORT=%d", s3Port), fmt.Sprintf("TESSERA_WEB_PORT=%d", webPort),
		"TESSERA_ACCESS_KEY=composeaccess", "TESSERA_SECRET_KEY=composesecret-0123456789", "TESSERA_CLUSTER_SECRET=compose-cluster-secret",
	}}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.run("logs", "--tail", "40")
			t.Logf("container logs:\n%s", out)
		}
		_, _ = p.run("down", "-v", "--remove-orphans")
	})
	p.must("up", "-d")

	mc, _ := newMinio(t, fmt.Sprintf("127.0.0.1:%d", s3Port), "composeaccess", "composesecret-0123456789")
	ctx := context.Background()
	// Peers start in any order and the first ring epoch may be minted
	// before all six joined; an operator waits for the ring to hold every
	// peer, and so does this test.
	waitRing(t, fmt.Sprintf("http://127.0.0.1:%d/api/status", webPort), "composeaccess", "composesecret-0123456789", 6)
	waitFor(t, 90*time.Second, "cluster accepts a bucket", func() error {
		return mc.MakeBucket(ctx, "compose", minio.MakeBucketOptions{})
	})
	want := map[string][]byte{}
	for i := 0; i < 40; i++ {
		key := fmt.Sprintf("obj/%02d", i)
		want[key] = payload(int64(i), []int{0, 100, 5000, 300 << 10, 2<<20 + 7}[i%5])
		if _, err := mc.PutObject(ctx, "compose", key, bytes.NewReader(want[key]), int64(len(want[key])), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	readAll := func(stage string, prefix string) {
		t.Helper()
		for key, data := range want {
			if !strings.HasPrefix(key, prefix) {
				continue
			}
			obj, err := mc.GetObject(ctx, "compose", key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatalf("%s: get %s: %v", stage, key, err)
			}
			got, err := readAllLimited(obj, len(data))
			obj.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: %s read back %d bytes (err %v), want %d exact", stage, key, len(got), err, len(data))
			}
		}
	}
	readAll("all up", "")

	p.must("kill", "peer2", "peer5")
	readAll("two peers killed", "")
	putMore := func(stage string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			key := fmt.Sprintf("%s/%d", stage, i)
			want[key] = payload(int64(1000+i), 64<<10)
			if _, err := mc.PutObject(ctx, "compose", key, bytes.NewReader(want[key]), int64(len(want[key])), minio.PutObjectOptions{}); err != nil {
				t.Fatalf("%s: put %s: %v", stage, key, err)
			}
		}
	}
	putMore("degraded", 5)

	p.must("start", "peer2", "peer5")
	network, peer3 := name+"_default", name+"_peer3_1"
	waitFor(t, 60*time.Second, "restarted peers serve reads", func() error {
		_, err := mc.StatObject(ctx, "compose", "obj/00", minio.StatObjectOptions{})
		return err
	})
	// Objects written while two peers were dead hold exactly k shards
	// until repair restores them, so the partition is checked against the
	// fully redundant ones; all of them must read again once it heals.
	docker(t, "network", "disconnect", network, peer3)
	readAll("peer3 cut off", "obj/")
	putMore("partitioned", 5)
	readAll("after writes while partitioned", "partitioned/")
	docker(t, "network", "connect", "--alias", "peer3", network, peer3)
	waitFor(t, 60*time.Second, "reconnected peer serves reads", func() error {
		_, err := mc.StatObject(ctx, "compose", "degraded/0", minio.StatObjectOptions{})
		return err
	})
	readAll("partition healed", "")
}

// waitRing polls the status API until the ring has an epoch naming peers
// peers and it has stayed the same for a few seconds.
func waitRing(t *testing.T, url, user, pass string, peers int) {
	t.Helper()
	type status struct {
		Ring struct {
			Epoch *uint64 `json:"epoch"`
			Peers int     `json:"peers"`
		} `json:"ring"`
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	var last uint64
	stable := 0
	waitFor(t, 120*time.Second, fmt.Sprintf("a settled ring epoch with %d peers", peers), func() error {
		req, _ := http.NewRequest("GET", url, nil)
		req.SetBasicAuth(user, pass)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var st status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return fmt.Errorf("status %d: %w", resp.StatusCode, err)
		}
		if st.Ring.Epoch == nil || *st.Ring.Epoch == 0 || st.Ring.Peers != peers {
			stable = 0
			return fmt.Errorf("ring epoch %v with %d peers", st.Ring.Epoch, st.Ring.Peers)
		}
		if *st.Ring.Epoch != last {
			last, stable = *st.Ring.Epoch, 0
		}
		if stable++; stable < 8 { // about 4 s unchanged
			return fmt.Errorf("epoch %d not yet settled", last)
		}
		return nil
	})
}

// waitFor polls f until it succeeds or the deadline passes.
func waitFor(t testing.TB, limit time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, limit, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
