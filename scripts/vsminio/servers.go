package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a server running as a child process. done closes when it exits.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // the exit status, once done is closed
}

// startProc runs bin with args and exactly the given extra environment
// (over ours without TESSERA_* and MINIO_* variables, which would otherwise
// override flags), its output going to logPath.
func startProc(name, bin string, args, env []string, logPath string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group keeps a terminal's Ctrl-C from reaching the
	// server mid-measurement: we stop it ourselves, in order. Pdeathsig
	// stops it should this program be killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TESSERA_") && !strings.HasPrefix(kv, "MINIO_") {
			out = append(out, kv)
		}
	}
	return out
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the server's PID, and SIGKILL if it has not exited
// within 20 seconds.
func (p *proc) stop() error {
	if p.exited() {
		return fmt.Errorf("%s (pid %d) had exited early: %v; log %s", p.name, p.pid(), p.err, p.log)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s (pid %d) ignored SIGTERM for 20s; killed", p.name, p.pid())
	}
}

// freeAddr returns a 127.0.0.1 address nothing listens on now. The port
// may be taken again before the server binds it; start then fails loudly.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func freeAddrs(n int) ([]string, error) {
	var out []string
	for range n {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

type creds struct{ access, secret string }

func newCreds() creds {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return creds{access: "bench" + hex.EncodeToString(b[:5]), secret: hex.EncodeToString(b[5:])}
}

// tesseraArgs are extra flags for `tessera server` (-tessera-args).
var tesseraArgs []string

// startTessera runs `tessera server` on one data dir (six peers by default,
// EC 4+2 by default).
func startTessera(bin, root string, c creds) ([]*proc, string, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, "", err
	}
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, "", fmt.Errorf("tessera data dir: %w", err)
	}
	args := []string{"server", "--address", addrs[0], "--web-address", addrs[1],
		"--peers", "6", "--ec", "4+2", "--log-level", "warn"}
	args = append(append(args, tesseraArgs...), data)
	env := []string{"TESSERA_ACCESS_KEY=" + c.access, "TESSERA_SECRET_KEY=" + c.secret,
		"TESSERA_CLUSTER_SECRET=" + hex.EncodeToString([]byte(c.secret))}
	p, err := startProc("tessera", bin, args, env, filepath.Join(root, "server.log"))
	return procsOf(p), addrs[0], err
}

func procsOf(p *proc) []*proc {
	if p == nil {
		return nil
	}
	return []*proc{p}
}

// clusterName is the target -cluster adds.
const clusterName = "cluster"

// startTesseraCluster runs `tessera gateway` and six `tessera peer`
// processes joining it over gossip on loopback, EC 4+2: the layout of a
// real deployment, every shard crossing a socket.
func startTesseraCluster(bin, root string, c creds) ([]*proc, string, error) {
	addrs, err := freeAddrs(3)
	if err != nil {
		return nil, "", err
	}
	env := []string{"TESSERA_ACCESS_KEY=" + c.access, "TESSERA_SECRET_KEY=" + c.secret,
		"TESSERA_CLUSTER_SECRET=" + hex.EncodeToString([]byte(c.secret))}
	gw, err := startProc("cluster gateway", bin, []string{"gateway", "--address", addrs[0], "--web-address", addrs[1],
		"--bind", addrs[2], "--ec", "4+2", "--log-level", "warn"}, env, filepath.Join(root, "gateway.log"))
	if err != nil {
		return nil, "", err
	}
	procs := []*proc{gw}
	for i := 1; i <= 6; i++ {
		dir := filepath.Join(root, "peer"+strconv.Itoa(i))
		pa, err := freeAddrs(2)
		if err != nil {
			return procs, "", err
		}
		p, err := startProc("cluster peer"+strconv.Itoa(i), bin, []string{"peer", dir, "--address", pa[0], "--bind", pa[1],
			"--join", addrs[2], "--log-level", "warn"}, env, filepath.Join(root, "peer"+strconv.Itoa(i)+".log"))
		if err != nil {
			return procs, "", err
		}
		procs = append(procs, p)
	}
	return procs, addrs[0], nil
}

// startMinio runs `minio server DIR{1...6}`: one erasure set of six drives,
// EC:2 parity for the standard class, so 4+2 like tessera.
func startMinio(bin, root string, c creds) ([]*proc, string, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, "", err
	}
	for i := 1; i <= 6; i++ {
		if err := os.MkdirAll(filepath.Join(root, "d"+strconv.Itoa(i)), 0o700); err != nil {
			return nil, "", fmt.Errorf("minio drive dir: %w", err)
		}
	}
	args := []string{"server", "--address", addrs[0], "--console-address", addrs[1],
		filepath.Join(root, "d{1...6}")}
	env := []string{
		"MINIO_STORAGE_CLASS_STANDARD=EC:2",
		// The drives share the root disk; MinIO refuses that unless told
		// the root drive threshold is this small.
		"MINIO_ROOTDRIVE_THRESHOLD_SIZE=1",
		"MINIO_ROOT_USER=" + c.access, "MINIO_ROOT_PASSWORD=" + c.secret,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off",
	}
	p, err := startProc("minio", bin, args, env, filepath.Join(root, "server.log"))
	return procsOf(p), addrs[0], err
}

// checkLocalDisk refuses a tmpfs parent: data in RAM would measure neither
// server's disk path.
func checkLocalDisk(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", dir, err)
	}
	const tmpfsMagic = 0x01021994
	if st.Type == tmpfsMagic {
		return fmt.Errorf("%s is tmpfs; pass -tmp with a dir on a local disk", dir)
	}
	return nil
}

// waitExitOrCtx waits d, returning an error if one of ps has exited or
// ctx ends first, for the readiness wait.
func waitExitOrCtx(ctx context.Context, ps []*proc, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
	}
	for _, p := range ps {
		if p.exited() {
			return fmt.Errorf("%s exited during start: %v; log %s", p.name, p.err, p.log)
		}
	}
	return nil
}

var errNotReady = errors.New("not ready")
