package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// sample is one server's run of one cell in one round.
type sample struct {
	ops, bytes, errs int64
	elapsed          time.Duration
	cpu              float64 // server CPU seconds over the run
}

func (s sample) opsPerSec() float64 { return float64(s.ops) / s.elapsed.Seconds() }
func (s sample) mbPerSec() float64  { return float64(s.bytes) / 1e6 / s.elapsed.Seconds() }

// results holds samples[cell][target] over rounds.
type results struct {
	samples map[string]map[string][]sample
}

func (r *results) add(c cell, t *target, s sample) {
	if r.samples[c.name] == nil {
		r.samples[c.name] = map[string][]sample{}
	}
	r.samples[c.name][t.name] = append(r.samples[c.name][t.name], s)
}

func (r *results) errors() int64 {
	var n int64
	for _, byTarget := range r.samples {
		for _, ss := range byTarget {
			for _, s := range ss {
				n += s.errs
			}
		}
	}
	return n
}

var pl = newPayloads()

// prewrite writes the GET keys of every size some selected GET cell reads,
// once, on every target.
func prewrite(ctx context.Context, targets []*target, cells []cell) error {
	done := map[int64]bool{}
	for _, c := range cells {
		if c.op != "GET" || done[c.size] {
			continue
		}
		done[c.size] = true
		for _, t := range targets {
			for i := range int64(getKeys) {
				if err := t.put(ctx, c.key(i), pl[c.size], false); err != nil {
					return fmt.Errorf("%s: prewrite: %w", t.name, err)
				}
			}
		}
	}
	return nil
}

// measure runs every round over every cell, both targets back to back per
// cell, alternating which goes first.
func measure(ctx context.Context, cfg config, targets []*target, cells []cell) (*results, error) {
	res := &results{samples: map[string]map[string][]sample{}}
	for r := range cfg.rounds {
		for _, c := range cells {
			for _, t := range order(targets, r) {
				s, err := t.run(ctx, c, cfg.dur)
				if err != nil {
					return nil, err
				}
				res.add(c, t, s)
				logSample(r, cfg.rounds, c, t, s)
			}
		}
	}
	return res, nil
}

// order is targets as given in even rounds, reversed in odd ones: with
// three, the first and last alternate and the middle one stays between.
func order(targets []*target, round int) []*target {
	out := append([]*target(nil), targets...)
	if round%2 == 1 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

func logSample(r, rounds int, c cell, t *target, s sample) {
	fmt.Fprintf(os.Stderr, "round %d/%d  %-26s %-7s %9.1f ops/s %8.1f MB/s  cpu %6.2fs  errors %d\n",
		r+1, rounds, c.name, t.name, s.opsPerSec(), s.mbPerSec(), s.cpu, s.errs)
}

// run drives cell c on t with c.conc workers for dur. Requests started
// before the deadline finish; elapsed runs to the last one, so the rate
// counts exactly the work timed. An error from a server that has exited, or
// an interrupt, ends the whole run; other request errors are counted.
func (t *target) run(ctx context.Context, c cell, dur time.Duration) (sample, error) {
	if p := t.exited(); p != nil {
		return sample{}, fmt.Errorf("%s exited: %v; log %s", p.name, p.err, p.log)
	}
	cpu0, err := t.cpuSeconds()
	if err != nil {
		return sample{}, err
	}
	var next, ops, errs atomic.Int64
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for range c.conc {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				key := c.key(next.Add(1) - 1)
				if err := t.do(ctx, c, key, pl[c.size]); err != nil {
					if ctx.Err() != nil {
						return
					}
					reportError(t, c, errs.Add(1), err)
					continue
				}
				ops.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return sample{}, err
	}
	if p := t.exited(); p != nil {
		return sample{}, fmt.Errorf("%s exited during %s: %v; log %s", p.name, c.name, p.err, p.log)
	}
	cpu1, err := t.cpuSeconds()
	if err != nil {
		return sample{}, err
	}
	return sample{ops: ops.Load(), bytes: ops.Load() * c.size, errs: errs.Load(),
		elapsed: elapsed, cpu: cpu1 - cpu0}, nil
}

// reportError prints the first errors of a run in full and then every
// thousandth, so a failing server is loud without flooding the terminal.
func reportError(t *target, c cell, n int64, err error) {
	if n <= 3 || n%1000 == 0 {
		fmt.Fprintf(os.Stderr, "ERROR %s %s (#%d): %v\n", t.name, c.name, n, err)
	}
}
