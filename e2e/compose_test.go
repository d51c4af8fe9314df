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

// buildImage builds the static binary and the FROM-scratch image, from a
// context laid out as the repository's .dockerignore leaves it: the binary
// and the empty data directory the image's /data is copied from.
func buildImage(t *testing.T, root, tag string) {
	t.Helper()
	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "tessera"), ".")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	for _, f := range []string{"Dockerfile", ".dockerignore"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctxDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ctxDir, "deploy", "docker", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	docker(t, "build", "-q", "-t", tag, ctxDir)
}

// imageUser is the user the image's processes run as.
const imageUser = "65532:65532"

// container returns the ID of a service's container, running or not.
func (p *composeProject) container(service string) string {
	p.t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+p.name,
		"--filter", "label=com.docker.compose.service="+service).Output()
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" || strings.Contains(id, "\n") {
		p.t.Fatalf("container of %s: %q %v", service, out, err)
	}
	return id
}

// health is a container's health status (starting, healthy, unhealthy) and
// the output of its last check.
func (p *composeProject) health(service string) (status, last string) {
	p.t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{json .State.Health}}", p.container(service)).Output()
	if err != nil {
		p.t.Fatalf("inspect %s: %v", service, err)
	}
	var h struct {
		Status string
		Log    []struct {
			ExitCode int
			Output   string
		}
	}
	if err := json.Unmarshal(out, &h); err != nil {
		p.t.Fatalf("inspect %s health %q: %v", service, out, err)
	}
	if n := len(h.Log); n > 0 {
		last = fmt.Sprintf("exit %d: %s", h.Log[n-1].ExitCode, strings.TrimSpace(h.Log[n-1].Output))
	}
	return h.Status, last
}

// waitHealth waits until every service's health check reports want.
func (p *composeProject) waitHealth(want string, limit time.Duration, services ...string) {
	p.t.Helper()
	waitFor(p.t, limit, fmt.Sprintf("%v %s", services, want), func() error {
		for _, s := range services {
			if st, last := p.health(s); st != want {
				return fmt.Errorf("%s is %s (last check %s)", s, st, last)
			}
		}
		return nil
	})
}

// checkNonRoot: the image names a non-root user and the container's
// process runs as it.
func (p *composeProject) checkNonRoot(tag, service string) {
	p.t.Helper()
	out, err := exec.Command("docker", "image", "inspect", "-f", "{{.Config.User}}", tag).Output()
	if err != nil || strings.TrimSpace(string(out)) != imageUser {
		p.t.Fatalf("image %s user %q (%v), want %s", tag, out, err, imageUser)
	}
	out, err = exec.Command("docker", "top", p.container(service), "-o", "pid,uid,gid,args").Output()
	if err != nil {
		p.t.Fatalf("docker top %s: %v", service, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		p.t.Fatalf("docker top %s: no process:\n%s", service, out)
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) < 3 || f[1]+":"+f[2] != imageUser {
			p.t.Errorf("%s runs a process as uid:gid %v, want %s:\n%s", service, f[1:3], imageUser, out)
		}
	}
}

// TestDockerCompose brings up one gateway and six peer containers from the
// project's image, which run as a non-root user and turn healthy, writes
// objects, kills two peer containers and reads everything back, then cuts
// a third peer off the network and shows the cluster keeps serving reads
// and writes. Last, the gateway's health check turns unhealthy while all
// peers are stopped and healthy again once they are back.
func TestDockerCompose(t *testing.T) {
	needFull(t)
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
	peers := []string{"peer1", "peer2", "peer3", "peer4", "peer5", "peer6"}
	p.waitHealth("healthy", 90*time.Second, append([]string{"gateway"}, peers...)...)
	p.checkNonRoot(tag, "gateway")
	p.checkNonRoot(tag, "peer1")
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

	// The health check follows readiness: with its peers stopped the
	// gateway cannot take a write, and it is healthy again once they are
	// back, with their data in the volumes they own.
	p.must(append([]string{"stop"}, peers...)...)
	p.waitHealth("unhealthy", 60*time.Second, "gateway")
	p.must(append([]string{"start"}, peers...)...)
	p.waitHealth("healthy", 120*time.Second, append([]string{"gateway"}, peers...)...)
	waitFor(t, 60*time.Second, "restarted peers serve reads", func() error {
		_, err := mc.StatObject(ctx, "compose", "obj/00", minio.StatObjectOptions{})
		return err
	})
	readAll("peers restarted", "")
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
