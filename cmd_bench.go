package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"

	"tessera/gateway"
	"tessera/sched"
	"tessera/sim"
)

// benchConfig is what `tessera bench` runs.
type benchConfig struct {
	endpoints                      listFlag
	access, secret, region, bucket string
	policies                       listFlag
	rhos                           floatList
	bursts                         intList
	requests, objects, concurrency int
	capacity                       float64 // aggregate peer bytes/s that ρ refers to
	meanSize                       float64 // of the objects written
	maxSize                        int64
	seed                           uint64
	format                         string
	classes                        listFlag // storage classes, object i in classes[i mod len]
}

// runBench drives a running cluster with the simulator's workload, once
// per policy (switched through the admin API), and prints the table.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("bench", "bench --endpoint ADDR [flags]", "Benchmarks the read schedulers against a running cluster, one policy after another.")
	fs := cmd.fs
	c := benchConfig{rhos: floatList{0.5}, bursts: intList{10, 100}}
	var gbps float64
	fs.Var(&c.endpoints, "endpoint", "S3 endpoints host:port of the gateways (comma-separated; GETs go to them in turn) (default 127.0.0.1:9000)")
	fs.StringVar(&c.bucket, "bucket", "tessera-bench", "bucket to fill and read")
	fs.Var(&c.policies, "policies", "policies to run in turn (comma-separated; default all)")
	fs.Var(&c.rhos, "rho", "offered loads, fractions of --capacity-gbps (comma-separated)")
	fs.Var(&c.bursts, "burst", "burst sizes p (comma-separated)")
	fs.IntVar(&c.requests, "requests", 2000, "GETs per point")
	fs.IntVar(&c.objects, "objects", 200, "objects written before the runs and read at random")
	fs.IntVar(&c.concurrency, "concurrency", 512, "most GETs outstanding at once")
	fs.Float64Var(&gbps, "capacity-gbps", 10, "aggregate peer send rate in Gbit/s that --rho refers to (e.g. 10 peers at --max-send-rate 125e6)")
	fs.Int64Var(&c.maxSize, "max-size", 16<<20, "largest object written")
	seed := fs.Uint64("seed", 1, "workload seed")
	fs.StringVar(&c.format, "format", "table", "output: table or json")
	fs.Var(&c.classes, "storage-classes", "write object i in class i mod len of these gateway storage classes (comma-separated; default the gateway's code), as `tessera sim --objects` gives object i code i mod len of --codes")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.noArgs(pos); err != nil {
		return err
	}
	c.seed = *seed
	c.capacity = gbps * 125e6
	c.access, c.secret = os.Getenv("TESSERA_ACCESS_KEY"), os.Getenv("TESSERA_SECRET_KEY")
	c.region = envOr("TESSERA_REGION", "us-east-1")
	if c.access == "" || c.secret == "" {
		return errors.New("bench: TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY must be set")
	}
	if len(c.policies) == 0 {
		c.policies = sched.Policies()
	}
	if len(c.endpoints) == 0 {
		c.endpoints = listFlag{"127.0.0.1:9000"}
	}
	if c.requests < 1 || c.objects < 1 || c.concurrency < 1 || c.capacity <= 0 {
		return errors.New("bench: --requests, --objects, --concurrency and --capacity-gbps must be positive")
	}
	var cls []*minio.Client
	for _, ep := range c.endpoints {
		cl, err := minio.New(ep, &minio.Options{Creds: credentials.NewStaticV4(c.access, c.secret, ""), Region: c.region})
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		cls = append(cls, cl)
	}
	keys, sizes, err := benchFill(ctx, cls[0], c)
	if err != nil {
		return err
	}
	var sum int64
	for _, s := range sizes {
		sum += s
	}
	c.meanSize = float64(sum) / float64(len(sizes))
	var rows []sim.Row
	total := len(c.policies) * len(c.rhos) * len(c.bursts) * c.requests
	bar := &progress{w: stderr, total: total}
	for _, pol := range c.policies {
		for _, ep := range c.endpoints {
			if err := setPolicy(ctx, c, ep, pol); err != nil {
				return err
			}
		}
		for _, rho := range c.rhos {
			for _, burst := range c.bursts {
				bar.label = fmt.Sprintf("%s ρ=%g p=%d", pol, rho, burst)
				res, err := benchPoint(ctx, cls, c, keys, rho, burst, bar)
				if err != nil {
					return err
				}
				row := sim.Summarise(res)
				row.Policy, row.Rho, row.Burst = pol, rho, burst
				rows = append(rows, row)
			}
		}
	}
	bar.finish()
	if c.format == "json" {
		return sim.WriteJSON(stdout, rows)
	}
	fmt.Fprintf(stdout, "live, %s, %d GETs per point over %d objects (mean %.2f MiB); moved/needed and hedge rate are not measured live (0)\n\n",
		c.endpoints.String(), c.requests, len(keys), c.meanSize/(1<<20))
	return sim.WriteTable(stdout, rows)
}

// benchFill writes the objects, sizes drawn from the workload, and
// returns their keys and sizes.
func benchFill(ctx context.Context, cl *minio.Client, c benchConfig) ([]string, []int64, error) {
	if err := cl.MakeBucket(ctx, c.bucket, minio.MakeBucketOptions{Region: c.region}); err != nil {
		if ok, _ := cl.BucketExists(ctx, c.bucket); !ok {
			return nil, nil, fmt.Errorf("bench: make bucket: %w", err)
		}
	}
	sizes := sim.ObjectSizes(c.objects, c.seed, c.maxSize)
	var keys []string
	for i, size := range sizes {
		data := make([]byte, size)
		_, _ = rand.Read(data) // documented never to fail
		key := fmt.Sprintf("obj-%05d", i)
		var opts minio.PutObjectOptions
		if len(c.classes) > 0 {
			opts.StorageClass = c.classes[i%len(c.classes)]
		}
		if _, err := cl.PutObject(ctx, c.bucket, key, bytes.NewReader(data), size, opts); err != nil {
			return nil, nil, fmt.Errorf("bench: put %s: %w", key, err)
		}
		keys = append(keys, key)
	}
	return keys, sizes, nil
}

// setPolicy switches the gateway's policy through the admin API.
func setPolicy(ctx context.Context, c benchConfig, endpoint, name string) error {
	u := "http://" + endpoint + gateway.AdminPrefix + "sched?policy=" + name
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, nil)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	req.Header.Set("X-Amz-Content-Sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	req = signer.SignV4(*req, c.access, c.secret, "", c.region)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("bench: set policy %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("bench: set policy %s: %s: %s", name, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// benchPoint replays one (ρ, p) trace against the cluster, GET i through
// gateway i mod G as in the simulator. The trace's gaps are scaled to the
// mean size of the objects written, so ρ is the load actually offered.
func benchPoint(ctx context.Context, cls []*minio.Client, c benchConfig, keys []string, rho float64, burst int, bar *progress) (sim.Result, error) {
	arrivals := sim.Arrivals(rho, burst, c.requests, c.seed, c.capacity, c.meanSize)
	var (
		mu      sync.Mutex
		res     sim.Result
		failed  atomic.Int64
		wg      sync.WaitGroup
		firstEr error
	)
	sem := make(chan struct{}, c.concurrency)
	start := time.Now()
	for i, at := range arrivals {
		if d := time.Until(start.Add(time.Duration(at * float64(time.Second)))); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				wg.Wait()
				return sim.Result{}, ctx.Err()
			}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			err := benchGet(ctx, cls[i%len(cls)], c.bucket, keys[sim.ObjectOf(i, len(keys))])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed.Add(1)
				if firstEr == nil {
					firstEr = err
				}
			} else {
				res.Latencies = append(res.Latencies, time.Since(t0).Seconds())
				res.Bursts = append(res.Bursts, i/burst)
			}
			bar.add()
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return sim.Result{}, fmt.Errorf("bench: %d GETs failed, first: %w", n, firstEr)
	}
	return res, nil
}

func benchGet(ctx context.Context, cl *minio.Client, bucket, key string) error {
	obj, err := cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	_, err = io.Copy(io.Discard, obj)
	return err
}

// progress draws a one-line bar on w.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	total, done int
	label       string
	last        time.Time
}

func (p *progress) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if time.Since(p.last) < 100*time.Millisecond && p.done < p.total {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := width * p.done / max(p.total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %-28s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), 100*p.done/max(p.total, 1), p.label)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w)
}
