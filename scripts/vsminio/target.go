package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

const bucket = "bench"

// target is one server under test and the client that drives it. procs
// are its processes, the one serving S3 first: one for the embedded
// server and MinIO, a gateway and its peers for the tessera cluster.
type target struct {
	name  string
	bin   string
	procs []*proc
	cl    *minio.Client
	// root, startFn and creds start it again on the same data (-scale).
	root    string
	startFn startFunc
	creds   creds
}

// startFunc starts a server on the data under root and returns its
// processes and S3 address.
type startFunc func(bin, root string, c creds) ([]*proc, string, error)

// exited returns a process of t that has exited, or nil.
func (t *target) exited() *proc {
	for _, p := range t.procs {
		if p.exited() {
			return p
		}
	}
	return nil
}

// cpuSeconds is the CPU time of all of t's processes.
func (t *target) cpuSeconds() (float64, error) {
	var sum float64
	for _, p := range t.procs {
		c, err := cpuSeconds(p.pid())
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// environment owns the temp dirs and the server processes.
type environment struct {
	cfg       config
	root      string
	targets   []*target
	loadStart string
	loadEnd   string
}

func newEnvironment(cfg config) *environment { return &environment{cfg: cfg} }

// start launches both servers, waits until each answers S3 and creates the
// bucket on each. Whatever it started is stopped by stop, even on error.
func (e *environment) start(ctx context.Context) ([]*target, error) {
	if err := checkLocalDisk(e.cfg.tmp); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(e.cfg.tmp, "vsminio-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	e.root = root
	c := newCreds()
	type start struct {
		name, bin string
		fn        startFunc
	}
	starts := []start{{"tessera", e.cfg.tessera, startTessera}, {"MinIO", e.cfg.minio, startMinio}}
	if e.cfg.alone {
		starts = starts[:1]
	}
	if e.cfg.cluster {
		starts = append(starts, start{clusterName, e.cfg.tessera, startTesseraCluster})
	}
	for _, s := range starts {
		dir := filepath.Join(root, s.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%s dir: %w", s.name, err)
		}
		ps, addr, err := s.fn(s.bin, dir, c)
		t := &target{name: s.name, bin: s.bin, procs: ps, root: dir, startFn: s.fn, creds: c}
		e.targets = append(e.targets, t) // stop stops what started, even on error
		if err != nil {
			return nil, err
		}
		if t.cl, err = newClient(addr, c); err != nil {
			return nil, err
		}
		if err := t.ready(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "%s ready: pid %d, s3 %s, log %s\n", t.name, ps[0].pid(), addr, ps[0].log)
	}
	return e.targets, nil
}

// stop stops every server by its PID and removes the temp dirs unless -keep.
func (e *environment) stop() error {
	var errs []error
	for _, t := range e.targets {
		for _, p := range t.procs {
			if err := p.stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if e.root != "" && !e.cfg.keep && len(errs) == 0 {
		if err := os.RemoveAll(e.root); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", e.root, err))
		}
	} else if e.root != "" {
		fmt.Fprintf(os.Stderr, "kept %s\n", e.root)
	}
	return errors.Join(errs...)
}

// newClient is one minio-go client per server, shared by all workers. Its
// transport keeps up to 128 idle connections per host, more than the
// highest concurrency, so no cell pays for connection churn.
func newClient(addr string, c creds) (*minio.Client, error) {
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	tr.Proxy = nil
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 128
	cl, err := minio.New(addr, &minio.Options{
		Creds:     credentials.NewStaticV4(c.access, c.secret, ""),
		Region:    "us-east-1",
		Transport: tr,
		// Path-style, as both servers serve it on a bare host:port.
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", addr, err)
	}
	return cl, nil
}

// ready waits up to two minutes for ListBuckets to succeed, then creates the
// bucket.
func (t *target) ready(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last error = errNotReady
	for time.Now().Before(deadline) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, last = t.cl.ListBuckets(rctx)
		cancel()
		if last == nil {
			break
		}
		if err := waitExitOrCtx(ctx, t.procs, 250*time.Millisecond); err != nil {
			return err
		}
	}
	if last != nil {
		return fmt.Errorf("%s not answering after 2m: %w; log %s", t.name, last, t.procs[0].log)
	}
	if err := t.cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("%s: make bucket: %w", t.name, err)
	}
	return nil
}
