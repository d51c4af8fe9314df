package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// gatedReader yields data but stops at gateAt until gate is closed,
// closing reached when it gets there: a PUT held in flight.
type gatedReader struct {
	data    []byte
	off     int
	gateAt  int
	gate    chan struct{}
	reached chan struct{}
	once    sync.Once
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.off == g.gateAt {
		g.once.Do(func() { close(g.reached) })
		<-g.gate
	}
	if g.off == len(g.data) {
		return 0, io.EOF
	}
	end := len(g.data)
	if g.off < g.gateAt {
		end = g.gateAt
	}
	n := copy(p, g.data[g.off:end])
	g.off += n
	return n, nil
}

// TestSecondServerOnLockedDir starts `tessera server DIR`, holds a PUT in
// flight with shards staged on every peer, and starts a second `tessera
// server` on the same DIR and a `tessera peer` on one of its peers'
// directories: each must exit non-zero saying the directory is in use,
// without changing a file, and the first's PUT and later requests must
// all succeed.
func TestSecondServerOnLockedDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two tessera processes; run without -short")
	}
	dir := t.TempDir()
	first := startProcessIn(t, dir)
	mc, _ := newMinio(t, first.s3, first.access, first.secret)
	makeBucketSoon(t, mc, "locked")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	data := payload(14, 3<<20)
	g := &gatedReader{data: data, gateAt: 2 << 20, gate: make(chan struct{}), reached: make(chan struct{})}
	putErr := make(chan error, 1)
	go func() {
		_, err := mc.PutObject(ctx, "locked", "in-flight", g, int64(len(data)), minio.PutObjectOptions{DisableMultipart: true})
		putErr <- err
	}()
	select {
	case <-g.reached:
	case err := <-putErr:
		t.Fatalf("PUT ended before its gate: %v", err)
	}
	waitUntil(t, 10*time.Second, "shards of the in-flight PUT staged on every peer", func() bool {
		return stagedPeers(t, dir) == 6
	})
	// The shards of the blocks already read are still streaming for a
	// moment: wait until nothing changes for a second.
	before := snapshotTree(t, dir)
	waitUntil(t, 20*time.Second, "the held PUT's staged files stop growing", func() bool {
		time.Sleep(time.Second)
		now := snapshotTree(t, dir)
		same := now == before
		before = now
		return same
	})

	peerDir := filepath.Join(dir, "peer1")
	for _, args := range [][]string{
		{"server", dir, "--address", "127.0.0.1:0", "--web-address", "127.0.0.1:0"},
		{"peer", peerDir, "--address", "127.0.0.1:0", "--bind", "127.0.0.1:0", "--join", "127.0.0.1:1"},
	} {
		out, code := runRefused(ctx, t, args...)
		locked := args[1]
		if code == 0 {
			t.Fatalf("tessera %s on a locked DIR exited 0; output:\n%s", args[0], out)
		}
		if !strings.Contains(out, "in use by another process") || !strings.Contains(out, locked) {
			t.Fatalf("tessera %s: the message does not say %s is in use:\n%s", args[0], locked, out)
		}
		if strings.Contains(out, "S3 endpoint") {
			t.Fatalf("second server printed an endpoint:\n%s", out)
		}
	}
	if after := snapshotTree(t, dir); after != before {
		t.Fatalf("the refused server changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	close(g.gate)
	if err := <-putErr; err != nil {
		t.Fatalf("the first server's in-flight PUT failed: %v", err)
	}
	for i := range 5 {
		key := fmt.Sprintf("after-%d", i)
		small := payload(int64(i), 200<<10)
		if _, err := mc.PutObject(ctx, "locked", key, bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("PUT %s after the refused start: %v", key, err)
		}
	}
	obj, err := mc.GetObject(ctx, "locked", "in-flight", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("in-flight object read back %d bytes, err %v", len(got), err)
	}
}

// runRefused runs tessera with args to its exit and returns its output
// and exit code.
func runRefused(ctx context.Context, t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tesseraBinary(t), append(args, "--log-level", "warn")...)
	cmd.Env = append(os.Environ(), "TESSERA_ACCESS_KEY=", "TESSERA_SECRET_KEY=", "TESSERA_CLUSTER_SECRET=another-secret")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("tessera %s still running after 30 s (killed); output:\n%s", args[0], out)
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run tessera %s: %v", args[0], err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// stagedPeers counts the peers of dir with a staged file.
func stagedPeers(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for i := 1; i <= 6; i++ {
		es, err := os.ReadDir(filepath.Join(dir, fmt.Sprintf("peer%d", i), ".tmp"))
		if err == nil && len(es) > 0 {
			n++
		}
	}
	return n
}

// snapshotTree lists every file under dir with its size and mtime.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %v %d %d\n", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
