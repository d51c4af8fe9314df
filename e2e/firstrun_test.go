package e2e

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	endpointLine = regexp.MustCompile(`^S3 endpoint: http://127\.0\.0\.1:\d+$`)
	pageLine     = regexp.MustCompile(`^Status page: http://127\.0\.0\.1:\d+$`)
	keyLine      = regexp.MustCompile(`^(Access|Secret)Key: \S+$`)
)

// TestFirstRun starts `tessera server` twice on one directory with its
// stdout and stderr on one pipe, as a terminal shows them. The first
// start prints the endpoint, the status page and the keys before any
// log line; the second prints where the keys are and never the keys; the
// log carries no colour codes, since the pipe is no terminal.
func TestFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two tessera processes; run without -short")
	}
	dir := t.TempDir()
	secrets := filepath.Join(dir, "tessera.secrets")
	first := runBanner(t, dir, 5)
	for i, re := range []*regexp.Regexp{endpointLine, pageLine, keyLine, keyLine} {
		if !re.MatchString(first.lines[i]) {
			t.Fatalf("first start, line %d: %q, want %v; output:\n%s", i+1, first.lines[i], re, first.text())
		}
	}
	if want := "Keys saved in " + secrets; !strings.HasPrefix(first.lines[4], want) {
		t.Fatalf("first start, line 5: %q, want %q", first.lines[4], want)
	}
	access, secret := readKeys(t, secrets)
	stopCmd(first.cmd)
	if first.lines[2] != "AccessKey: "+access || first.lines[3] != "SecretKey: "+secret {
		t.Fatalf("printed keys %q, %q are not the stored ones", first.lines[2], first.lines[3])
	}

	second := runBanner(t, dir, 3)
	if !endpointLine.MatchString(second.lines[0]) || !pageLine.MatchString(second.lines[1]) ||
		second.lines[2] != "Keys: in "+secrets {
		t.Fatalf("second start's banner:\n%s", second.text())
	}
	mc, _ := newMinio(t, second.host(t), access, secret)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := mc.ListBuckets(ctx); err != nil {
		t.Fatalf("the printed endpoint with the stored keys: %v", err)
	}
	for name, out := range map[string]string{"first": first.text(), "second": second.text()} {
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%s start's output has colour codes:\n%q", name, out)
		}
	}
	if strings.Contains(second.text(), secret) || strings.Contains(second.text(), access) {
		t.Errorf("second start printed the keys:\n%s", second.text())
	}
}

// banner is what a server printed on its combined stdout and stderr.
type banner struct {
	cmd   *exec.Cmd
	lines []string
}

func (b banner) text() string { return strings.Join(b.lines, "\n") }

// host is the S3 endpoint's host:port.
func (b banner) host(t *testing.T) string {
	u, err := url.Parse(strings.TrimPrefix(b.lines[0], "S3 endpoint: "))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// runBanner starts the server on dir, reads its output until the n
// banner lines and the start-up log after them are in, and leaves the
// server running until the test ends or stops b.cmd.
func runBanner(t *testing.T, dir string, n int) banner {
	t.Helper()
	cmd := exec.Command(tesseraBinary(t), "server", dir, "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY=", "TESSERA_SECRET_KEY=", "TESSERA_CLUSTER_SECRET=")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { stopCmd(cmd); r.Close() })
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	b := banner{cmd: cmd}
	sc := bufio.NewScanner(r)
	// "gateway started" is logged while the server starts: held, it must
	// come after the banner.
	for sc.Scan() {
		b.lines = append(b.lines, sc.Text())
		if strings.Contains(sc.Text(), "gateway started") {
			break
		}
	}
	if len(b.lines) <= n {
		t.Fatalf("server printed %d lines before its start-up log, want %d banner lines first:\n%s", len(b.lines), n, b.text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return b
}
