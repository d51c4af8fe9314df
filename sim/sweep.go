package sim

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// Row is one (policy, ρ, p) point pooled over seeds.
type Row struct {
	Policy    string  `json:"policy"`
	Rho       float64 `json:"rho"`
	Burst     int     `json:"burst"`
	Mean      float64 `json:"mean_ms"`
	P50       float64 `json:"p50_ms"`
	P95       float64 `json:"p95_ms"`
	P99       float64 `json:"p99_ms"`
	Var       float64 `json:"var_ms2"`
	Amp       float64 `json:"amp"`
	HedgeRate float64 `json:"hedge_rate"`
	Requests  int     `json:"requests"`
	Failed    int     `json:"failed"`
	// BurstMeans is the mean latency (ms) of each burst's finished GETs,
	// seeds one after another: the unit policies are paired on, since
	// burst b holds the same GETs under every policy.
	BurstMeans []float64 `json:"burst_mean_ms,omitempty"`
	// SeedMeans is the mean latency (ms) of each seed's run: with a
	// replayed workload (Params.Objects) each seed is one placement of
	// the objects, and a live cluster is one more.
	SeedMeans []float64 `json:"seed_mean_ms,omitempty"`
}

// Sweep runs every policy at every (ρ, p) for seeds 1..seeds on base,
// with common random numbers: a seed's workload is the same for every
// policy. Runs go in parallel on GOMAXPROCS workers; progress, if not
// nil, is called after each run with (done, total).
func Sweep(base Params, policies []string, rhos []float64, bursts []int, seeds int, progress func(int, int)) ([]Row, error) {
	type job struct {
		pi, ri, bi, seed int
	}
	type out struct {
		res Result
		err error
	}
	var jobs []job
	for pi := range policies {
		for ri := range rhos {
			for bi := range bursts {
				for s := 1; s <= seeds; s++ {
					jobs = append(jobs, job{pi, ri, bi, s})
				}
			}
		}
	}
	results := make([]out, len(jobs))
	var mu sync.Mutex
	done := 0
	ch := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				j := jobs[i]
				p := base
				p.Rho, p.Burst, p.Seed = rhos[j.ri], bursts[j.bi], uint64(j.seed)
				res, err := Run(policies[j.pi], p)
				results[i] = out{res, err}
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		ch <- i
	}
	close(ch)
	wg.Wait()
	var rows []Row
	for i := 0; i < len(jobs); i += seeds {
		j := jobs[i]
		var pooled Result
		var seedMeans []float64
		perSeed := (base.Requests + bursts[j.bi] - 1) / bursts[j.bi]
		for s, o := range results[i : i+seeds] {
			if o.err != nil {
				return nil, o.err
			}
			seedMeans = append(seedMeans, meanMs(o.res.Latencies))
			pooled.Latencies = append(pooled.Latencies, o.res.Latencies...)
			for _, b := range o.res.Bursts {
				pooled.Bursts = append(pooled.Bursts, s*perSeed+b)
			}
			pooled.Moved += o.res.Moved
			pooled.Needed += o.res.Needed
			pooled.Hedges += o.res.Hedges
			pooled.Failed += o.res.Failed
		}
		row := Summarise(pooled)
		row.Policy, row.Rho, row.Burst = policies[j.pi], rhos[j.ri], bursts[j.bi]
		if seeds > 1 {
			row.SeedMeans = seedMeans
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Summarise turns a result into a row (times in ms).
func Summarise(r Result) Row {
	row := Row{Requests: len(r.Latencies), Failed: r.Failed}
	if n := len(r.Latencies); n > 0 {
		s := slices.Clone(r.Latencies)
		slices.Sort(s)
		var sum float64
		for _, x := range s {
			sum += x
		}
		mean := sum / float64(n)
		var ss float64
		for _, x := range s {
			ss += (x - mean) * (x - mean)
		}
		q := func(f float64) float64 { return s[min(int(math.Ceil(f*float64(n)))-1, n-1)] * 1e3 }
		row.Mean, row.P50, row.P95, row.P99 = mean*1e3, q(0.50), q(0.95), q(0.99)
		row.Var = ss / float64(n) * 1e6
		row.HedgeRate = float64(r.Hedges) / float64(n)
	}
	if r.Needed > 0 {
		row.Amp = r.Moved / r.Needed
	}
	row.BurstMeans = burstMeans(r)
	return row
}

// burstMeans averages r's latencies per burst, in ms; nil without burst
// numbers. A burst none of whose GETs finished is -1.
func burstMeans(r Result) []float64 {
	if len(r.Bursts) != len(r.Latencies) || len(r.Bursts) == 0 {
		return nil
	}
	n := slices.Max(r.Bursts) + 1
	sum, cnt := make([]float64, n), make([]int, n)
	for i, b := range r.Bursts {
		sum[b] += r.Latencies[i]
		cnt[b]++
	}
	for b := range sum {
		if cnt[b] == 0 {
			sum[b] = -1
			continue
		}
		sum[b] = sum[b] / float64(cnt[b]) * 1e3
	}
	return sum
}

// meanMs is the mean of latencies in seconds, in ms (0 for none).
func meanMs(lat []float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	var sum float64
	for _, x := range lat {
		sum += x
	}
	return sum / float64(len(lat)) * 1e3
}
