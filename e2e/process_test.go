package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// tesseraBinary builds the command once per test run.
func tesseraBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tessera-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tessera")
		out, err := exec.Command("go", "build", "-o", binPath, "tessera").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// process is `tessera server` running as its own process, so its memory
// can be measured apart from the test's.
type process struct {
	cmd            *exec.Cmd
	s3, web        string
	access, secret string
}

func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	return startProcessIn(t, t.TempDir(), args...)
}

// startProcessIn is startProcess on a given data directory.
func startProcessIn(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	return startProcessLog(t, dir, os.Stderr, args...)
}

// startProcessLog is startProcessIn with the server's log written to
// stderr.
func startProcessLog(t *testing.T, dir string, stderr io.Writer, args ...string) *process {
	t.Helper()
	bin := tesseraBinary(t)
	all := append([]string{"server", dir, "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY=", "TESSERA_SECRET_KEY=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(func() { stopCmd(cmd) })
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	// A first start prints the keys; a later one where they are kept.
	var keysFile string
	for (p.s3 == "" || p.web == "" || (p.secret == "" && keysFile == "")) && sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "S3 endpoint":
			p.s3 = strings.TrimPrefix(v, "http://")
		case "Status page":
			p.web = strings.TrimPrefix(v, "http://")
		case "AccessKey":
			p.access = v
		case "SecretKey":
			p.secret = v
		case "Keys":
			keysFile = strings.TrimPrefix(v, "in ")
		}
	}
	if p.secret == "" && keysFile != "" {
		p.access, p.secret = readKeys(t, keysFile)
	}
	if p.s3 == "" || p.secret == "" {
		t.Fatalf("server did not print its endpoint and credentials")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p
}

// readKeys reads the S3 keys from a server's secrets file.
func readKeys(t *testing.T, path string) (access, secret string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AccessKey string `json:"access_key"`
		SecretKey string `json:"secret_key"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.AccessKey, c.SecretKey
}

// peakRSS is the process's high-water resident set size in bytes.
func (p *process) peakRSS(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestLargeObjectMemory PUTs and GETs a 1 GiB object through a separate
// server process and asserts its peak RSS stays under 100 MiB: memory per
// request is bounded by the block size, not the object size.
func TestLargeObjectMemory(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("moves 1 GiB through a server process (~30 s of disk I/O); run without -short")
	}
	p := startProcess(t)
	mc, _ := newMinio(t, p.s3, p.access, p.secret)
	ctx := context.Background()
	if err := mc.MakeBucket(ctx, "mem", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	// One streaming PUT (aws-chunked, no multipart), the worst case for a
	// server that buffers.
	_, err := mc.PutObject(ctx, "mem", "gib", newStream(1, size), size, minio.PutObjectOptions{DisableMultipart: true})
	if err != nil {
		t.Fatalf("put 1 GiB: %v", err)
	}
	afterPut := p.peakRSS(t)
	obj, err := mc.GetObject(ctx, "mem", "gib", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHash()
	n, err := io.Copy(h, obj)
	obj.Close()
	if err != nil || n != size {
		t.Fatalf("get 1 GiB: %d bytes, %v", n, err)
	}
	if h.sum() != streamSum(1, size) {
		t.Fatal("1 GiB object came back different")
	}
	peak := p.peakRSS(t)
	t.Logf("server peak RSS: %.1f MiB after PUT, %.1f MiB after GET of 1 GiB", float64(afterPut)/(1<<20), float64(peak)/(1<<20))
	if peak > 100<<20 {
		t.Fatalf("server peak RSS %.1f MiB exceeds 100 MiB", float64(peak)/(1<<20))
	}
}
