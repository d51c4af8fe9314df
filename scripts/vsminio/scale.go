package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
)

// Scale mode (-scale N1,N2,...): many small objects in one bucket, keys
// dNNN/fNNNNNNN spread over 1,000 prefixes, sizes 0–256 B. It fills both
// servers to each count in turn and, at each, measures point reads, the
// two kinds of listing and the time a restarted server takes to serve its
// first GET; at the end it deletes everything and measures the delete
// rate, what stays on disk, an empty listing and one more restart.
//
// Same window, as for the cells: the fill and the deletes go in chunks,
// alternating the server chunk by chunk; the read rows run -rounds times,
// alternating which server goes first. Ratios are medians of per-chunk or
// per-round ratios, always tessera/MinIO on a rate (higher is better for
// tessera) and MinIO/tessera on a time, so that ≥ 1 means tessera does
// at least as well on every row.

const (
	scalePrefixes = 1000
	scaleMaxSize  = 256
	fillChunk     = 5000
	fillConc      = 64
	pointConc     = 32
	deleteBatch   = 1000
)

func scaleKey(i int) string { return fmt.Sprintf("d%03d/f%07d", i%scalePrefixes, i) }
func scaleSize(i int) int   { return i % (scaleMaxSize + 1) }

// scaleBody is the shared random source of the small bodies.
var scaleBody = pl[4<<10][:scaleMaxSize]

// parseScale reads -scale's comma-separated object counts, which must rise.
func parseScale(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < scalePrefixes || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-scale: %q: want rising counts of at least %d", f, scalePrefixes)
		}
		out = append(out, n)
	}
	return out, nil
}

// scaleRow is one measured figure for both servers: per-chunk or per-round
// values, and whether it is a rate (higher is better) or a time.
type scaleRow struct {
	name   string
	rate   bool
	unit   string
	values map[string][]float64
}

type scaleTable struct{ rows []*scaleRow }

// add records one measured value and prints it at once, so that a long
// run stopped before its report still leaves every figure it measured.
func (tb *scaleTable) add(name, unit string, rate bool, t *target, v float64) {
	fmt.Fprintf(os.Stderr, "measured %s | %s | %s %s\n", name, t.name, fig(v), unit)
	for _, r := range tb.rows {
		if r.name == name {
			r.values[t.name] = append(r.values[t.name], v)
			return
		}
	}
	r := &scaleRow{name: name, rate: rate, unit: unit, values: map[string][]float64{}}
	r.values[t.name] = []float64{v}
	tb.rows = append(tb.rows, r)
}

// runScale starts both servers and measures every step of cfg.scale.
func runScale(ctx context.Context, cfg config) (err error) {
	env := newEnvironment(cfg)
	env.cfg.cluster = false
	env.loadStart = loadavg()
	targets, err := env.start(ctx)
	defer func() { err = errors.Join(err, env.stop()) }()
	if err != nil {
		return err
	}
	tb := &scaleTable{}
	have := 0
	for _, n := range cfg.scale {
		step := fmt.Sprintf("at %d objects: ", n)
		if err := fillTo(ctx, targets, tb, step, have, n); err != nil {
			return err
		}
		have = n
		for r := range cfg.rounds {
			for _, t := range order(targets, r) {
				if err := readRows(ctx, cfg, t, tb, step, n); err != nil {
					return err
				}
			}
		}
		for _, t := range targets {
			files, bytes := diskUse(t.root)
			tb.add(step+"files on disk per object", "files", false, t, float64(files)/float64(n))
			tb.add(step+"bytes on disk per object", "B", false, t, float64(bytes)/float64(n))
		}
	}
	// With -scale-delete-n only a slice of the keys goes: the delete rate
	// alone, since the bucket is not empty afterwards.
	deleteN := have
	if cfg.scaleDeleteN > 0 {
		deleteN = min(cfg.scaleDeleteN, have)
	}
	if cfg.scaleDelete {
		if err := deleteAll(ctx, targets, tb, deleteN); err != nil {
			return err
		}
	}
	if !cfg.scaleDelete || deleteN < have {
		env.loadEnd = loadavg()
		return emit(env.scaleReport(targets, tb), cfg.out)
	}
	if cfg.scaleWait > 0 {
		fmt.Fprintf(os.Stderr, "waiting %s for deleted data to be collected\n", cfg.scaleWait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cfg.scaleWait):
		}
	}
	for _, t := range targets {
		files, bytes := diskUse(t.root)
		tb.add("after deleting all: files on disk", "files", false, t, float64(files))
		tb.add("after deleting all: bytes on disk", "MB", false, t, float64(bytes)/1e6)
		d, err := timed(func() error { return drainList(ctx, t, "", true) })
		if err != nil {
			return err
		}
		tb.add("after deleting all: list the empty bucket", "s", false, t, d.Seconds())
		d, err = t.restart(ctx, scaleKey(0), true)
		if err != nil {
			return err
		}
		tb.add("after deleting all: restart until ListObjects answers", "s", false, t, d.Seconds())
	}
	env.loadEnd = loadavg()
	return emit(env.scaleReport(targets, tb), cfg.out)
}

// fillTo writes keys [from, to) on every target, chunk by chunk,
// alternating which target goes first.
func fillTo(ctx context.Context, targets []*target, tb *scaleTable, step string, from, to int) error {
	for c, lo := 0, from; lo < to; c, lo = c+1, lo+fillChunk {
		hi := min(lo+fillChunk, to)
		for _, t := range order(targets, c) {
			d, err := t.parallel(ctx, fillConc, lo, hi, func(ctx context.Context, i int) error {
				return t.putSmall(ctx, i)
			})
			if err != nil {
				return err
			}
			tb.add(step+"PUT 0–256 B, c=64 (the fill)", "ops/s", true, t, float64(hi-lo)/d.Seconds())
		}
		fmt.Fprintf(os.Stderr, "filled %d/%d\n", hi, to)
	}
	return nil
}

// readRows measures one round of the read rows on t, which holds n keys.
func readRows(ctx context.Context, cfg config, t *target, tb *scaleTable, step string, n int) error {
	for _, op := range []string{"HEAD", "GET"} {
		ops, err := t.randomReads(ctx, op, n, cfg.dur)
		if err != nil {
			return err
		}
		tb.add(fmt.Sprintf("%s%s of random keys, c=%d", step, op, pointConc), "ops/s", true, t, ops)
	}
	d, err := timed(func() error { return drainList(ctx, t, "", false) })
	if err != nil {
		return err
	}
	tb.add(step+"top-level listing with delimiter / (1,000 prefixes)", "s", false, t, d.Seconds())
	d, err = timed(func() error { return drainList(ctx, t, "", true) })
	if err != nil {
		return err
	}
	tb.add(step+"full listing, 1,000 per page", "s", false, t, d.Seconds())
	// Memory of the process that did the work, before the restart
	// replaces it: now, and its peak since it started (the fill's, in the
	// first round).
	pid := t.procs[0].pid()
	tb.add(step+"RSS after the reads", "MiB", false, t, statusMiB(pid, "VmRSS"))
	tb.add(step+"peak RSS since the server started", "MiB", false, t, statusMiB(pid, "VmHWM"))
	d, err = t.restart(ctx, scaleKey(n/2), false)
	if err != nil {
		return err
	}
	tb.add(step+"restart until the first GET succeeds", "s", false, t, d.Seconds())
	fmt.Fprintf(os.Stderr, "%s%s: reads measured\n", step, t.name)
	return nil
}

func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// parallel runs f(i) for i in [lo, hi) on conc workers and returns the
// wall time. The first error ends the run.
func (t *target) parallel(ctx context.Context, conc, lo, hi int, f func(context.Context, int) error) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	next.Store(int64(lo))
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= hi {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(fmt.Errorf("%s: %w", t.name, err))
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), context.Cause(ctx)
}

func (t *target) putSmall(ctx context.Context, i int) error {
	body := scaleBody[:scaleSize(i)]
	_, err := t.cl.PutObject(ctx, bucket, scaleKey(i), strings.NewReader(string(body)), int64(len(body)),
		minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true})
	if err != nil {
		return fmt.Errorf("PUT %s: %w", scaleKey(i), err)
	}
	return nil
}

// randomReads runs HEAD or GET of random keys among the first n on
// pointConc workers for dur and returns ops/s. Any error fails the run:
// every key read exists.
func (t *target) randomReads(ctx context.Context, op string, n int, dur time.Duration) (float64, error) {
	var ops atomic.Int64
	deadline := time.Now().Add(dur)
	d, err := t.parallel(ctx, pointConc, 0, 1<<62, func(ctx context.Context, _ int) error {
		if time.Now().After(deadline) {
			return errDone
		}
		i := rand.IntN(n)
		if err := t.readSmall(ctx, op, i); err != nil {
			return err
		}
		ops.Add(1)
		return nil
	})
	if err != nil && !errors.Is(err, errDone) {
		return 0, err
	}
	return float64(ops.Load()) / d.Seconds(), nil
}

var errDone = errors.New("time is up")

func (t *target) readSmall(ctx context.Context, op string, i int) error {
	key, want := scaleKey(i), int64(scaleSize(i))
	if op == "HEAD" {
		st, err := t.cl.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return fmt.Errorf("HEAD %s: %w", key, err)
		}
		if st.Size != want {
			return fmt.Errorf("HEAD %s: size %d, want %d", key, st.Size, want)
		}
		return nil
	}
	return t.get(ctx, key, want)
}

// drainList lists the whole bucket: recursively, 1,000 keys per page, or
// the top level with delimiter "/". Every page must come back whole.
func drainList(ctx context.Context, t *target, prefix string, recursive bool) error {
	for o := range t.cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: recursive, MaxKeys: 1000}) {
		if o.Err != nil {
			return fmt.Errorf("%s: list: %w", t.name, o.Err)
		}
	}
	return nil
}

// deleteAll removes keys [0, n) in batches of 1,000 (DeleteObjects),
// alternating the servers batch by batch.
func deleteAll(ctx context.Context, targets []*target, tb *scaleTable, n int) error {
	for c, lo := 0, 0; lo < n; c, lo = c+1, lo+fillChunk {
		hi := min(lo+fillChunk, n)
		for _, t := range order(targets, c) {
			d, err := timed(func() error { return t.deleteRange(ctx, lo, hi) })
			if err != nil {
				return err
			}
			tb.add("DELETE, batches of 1,000", "objects/s", true, t, float64(hi-lo)/d.Seconds())
		}
		fmt.Fprintf(os.Stderr, "deleted %d/%d\n", hi, n)
	}
	return nil
}

func (t *target) deleteRange(ctx context.Context, lo, hi int) error {
	for b := lo; b < hi; b += deleteBatch {
		ch := make(chan minio.ObjectInfo, deleteBatch)
		for i := b; i < min(b+deleteBatch, hi); i++ {
			ch <- minio.ObjectInfo{Key: scaleKey(i)}
		}
		close(ch)
		for e := range t.cl.RemoveObjects(ctx, bucket, ch, minio.RemoveObjectsOptions{}) {
			return fmt.Errorf("%s: delete %s: %w", t.name, e.ObjectName, e.Err)
		}
	}
	return nil
}

// restart stops t by PID, starts it again on the same data and returns
// the time from the new process's start until a GET of key succeeds (or,
// with gone, until a listing answers: the key was deleted).
func (t *target) restart(ctx context.Context, key string, gone bool) (time.Duration, error) {
	for _, p := range t.procs {
		if err := p.stop(); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	ps, addr, err := t.startFn(t.bin, t.root, t.creds)
	t.procs = ps
	if err != nil {
		return 0, err
	}
	if t.cl, err = newClient(addr, t.creds); err != nil {
		return 0, err
	}
	deadline := start.Add(10 * time.Minute)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if gone {
			err = drainList(rctx, t, "", true)
		} else {
			err = t.get(rctx, key, int64(scaleSize(keyIndex(key))))
		}
		cancel()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: not serving 10 min after restart: %w; log %s", t.name, err, t.procs[0].log)
		}
		if err := waitExitOrCtx(ctx, t.procs, 20*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

func keyIndex(key string) int {
	i, _ := strconv.Atoi(key[strings.LastIndexByte(key, 'f')+1:])
	return i
}

// statusMiB is a memory field of pid's /proc status (VmRSS, VmHWM) in
// MiB, -1 when unreadable.
func statusMiB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return -1
}

// diskUse counts the regular files and their bytes under a target's dir,
// its logs left out.
func diskUse(root string) (files int, bytes int64) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, ".log") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			files++
			bytes += fi.Size()
		}
		return nil
	})
	return files, bytes
}

// scaleReport renders the scale table: each row's medians and the ratio
// that reads ≥ 1 where tessera does at least as well.
func (e *environment) scaleReport(targets []*target, tb *scaleTable) string {
	var b strings.Builder
	e.header(&b, "tessera vs MinIO at scale")
	fmt.Fprintf(&b, "- fill and deletes in chunks of %d alternating the servers; read rows %d rounds × %s, order alternating\n", fillChunk, e.cfg.rounds, e.cfg.dur)
	for _, t := range targets {
		fmt.Fprintf(&b, "- %s: %s\n", t.name, version(t))
	}
	fmt.Fprintf(&b, "\nMedians over chunks or rounds; \"better\" is the median per-chunk or per-round ratio, tessera/MinIO for rates and MinIO/tessera for times and sizes, so ≥ 1 means tessera does at least as well.\n\n")
	fmt.Fprintf(&b, "| row | tessera | MinIO | better |\n|---|--:|--:|--:|\n")
	for _, r := range tb.rows {
		ts, ms := r.values["tessera"], r.values["MinIO"]
		var ratios []float64
		for i := range min(len(ts), len(ms)) {
			if r.rate {
				ratios = append(ratios, ts[i]/ms[i])
			} else {
				ratios = append(ratios, ms[i]/ts[i])
			}
		}
		if len(ms) == 0 { // -alone
			fmt.Fprintf(&b, "| %s | %s %s | — | — |\n", r.name, fig(medianOf(ts)), r.unit)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s %s | %.2f |\n", r.name, fig(medianOf(ts)), r.unit, fig(medianOf(ms)), r.unit, medianOf(ratios))
	}
	return b.String()
}

func fig(v float64) string {
	if v >= 100 || v == float64(int64(v)) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
