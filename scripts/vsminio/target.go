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

// target is one server under test and the client that drives it.
type target struct {
	name string
	bin  string
	proc *proc
	cl   *minio.Client
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
	starts := []struct {
		name, bin string
		fn        func(bin, root string, c creds) (*proc, string, error)
	}{{"tessera", e.cfg.tessera, startTessera}, {"MinIO", e.cfg.minio, startMinio}}
	for _, s := range starts {
		dir := filepath.Join(root, s.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%s dir: %w", s.name, err)
		}
		p, addr, err := s.fn(s.bin, dir, c)
		if err != nil {
			return nil, err
		}
		t := &target{name: s.name, bin: s.bin, proc: p}
		e.targets = append(e.targets, t)
		if t.cl, err = newClient(addr, c); err != nil {
			return nil, err
		}
		if err := t.ready(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "%s ready: pid %d, s3 %s, log %s\n", t.name, p.pid(), addr, p.log)
	}
	return e.targets, nil
}

// stop stops every server by its PID and removes the temp dirs unless -keep.
func (e *environment) stop() error {
	var errs []error
	for _, t := range e.targets {
		if err := t.proc.stop(); err != nil {
			errs = append(errs, err)
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
		if err := waitExitOrCtx(ctx, t.proc, 250*time.Millisecond); err != nil {
			return err
		}
	}
	if last != nil {
		return fmt.Errorf("%s not answering after 2m: %w; log %s", t.name, last, t.proc.log)
	}
	if err := t.cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("%s: make bucket: %w", t.name, err)
	}
	return nil
}
