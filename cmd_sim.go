package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"tessera/meta"
	"tessera/object"
	"tessera/peer"
	"tessera/sched"
	"tessera/sim"
)

// runSim runs the discrete-event simulation of the read scheduler.
func runSim(args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("sim", "sim [flags]", "Simulates the read schedulers (see SCHEDULING.md) and prints a table, JSON or SVG charts.")
	fs := cmd.fs
	p := sim.DefaultParams()
	policies := listFlag{}
	rhos, bursts := floatList{0.1, 0.5}, intList{10, 20, 50, 100, 200, 500}
	var seeds int
	var format, svgDir string
	var bw float64
	fs.IntVar(&p.Peers, "peers", p.Peers, "storage peers")
	fs.IntVar(&p.Gateways, "gateways", p.Gateways, "gateways, each with its own fetch pool")
	fs.IntVar(&p.Slots, "fetch-pool", p.Slots, "fetch threads per gateway (L)")
	fs.Var(&rhos, "rho", "offered loads, fractions of aggregate peer bandwidth (comma-separated)")
	fs.Var(&bursts, "burst", "burst sizes p, GETs arriving together (comma-separated)")
	fs.IntVar(&seeds, "seeds", 3, "seeds per point (common random numbers across policies)")
	fs.IntVar(&p.Requests, "requests", p.Requests, "GETs per run")
	fs.Var(&policies, "policies", "policies to compare (comma-separated; default all)")
	fs.BoolVar(&p.Hetero, "hetero", false, "mixed NICs (1 in 10 at 1/2, 1 in 10 at 1/4 speed) and on/off background load on 3 in 10 peers")
	fs.BoolVar(&p.Mixed, "mixed-nics", false, "mixed NICs as --hetero, without the background load")
	codes := codeList{}
	peerOrder := fs.Bool("peer-order", true, "peers send eta's fetches smallest read first, as pacing peers do (false: every transfer shares the link)")
	fs.Var(&codes, "codes", "erasure codes K+M drawn uniformly per object (comma-separated; default 1+1,2+2,3+3,4+6, seed 000's (n,k) = (2,1), (4,2), (6,3), (10,4))")
	fs.Float64Var(&bw, "peer-gbps", 1, "full-speed peer NIC in Gbit/s")
	fs.DurationVar(&p.Setup, "setup", p.Setup, "fixed cost per chunk fetch at a peer")
	fs.BoolVar(&p.OneHost, "one-host", false, "every peer on one host, gossiping the host's CPU, as on the live benchmark's host")
	fs.DurationVar(&p.Frontend, "frontend", 0, "per-GET handling at the gateway before the fetch pool, one GET at a time (e.g. 2ms, as measured on the live benchmark's shared host)")
	fs.Int64Var(&p.MaxSize, "max-size", 64<<20, "largest object (tessera bench writes at most 16 MiB by default)")
	fs.IntVar(&p.Objects, "objects", 0, "replay `tessera bench --objects N`'s workload: N objects, each with one code and placement, read in its order at its arrival times (0: a fresh object per GET)")
	fs.Uint64Var(&p.BenchSeed, "bench-seed", 1, "with --objects, the `tessera bench --seed` to replay; --seeds then vary only placements and background load")
	fs.Int64Var(&p.InlineLimit, "inline-limit", object.DefaultInlineLimit, "with --objects, objects of at most this many bytes are read from their metadata record, as the gateway reads inlined objects (0: through the pool)")
	fs.Int64Var(&p.MaxPooled, "max-pooled", 0, "with --objects, reads whose chunks are larger stream outside the pool in a fixed ETA order, as gateways read them before every GET went through the pool (0: every read through the pool, as the gateway reads now; 4194304 for the earlier gateway)")
	perBurst := fs.Bool("per-burst", false, "with --format json, add each point's mean latency per burst (burst_mean_ms) and per seed (seed_mean_ms)")
	against := fs.String("against", "", "instead of the table, compare the order of the policies with a live run's `tessera bench --format json` output")
	fs.StringVar(&format, "format", "table", "output: table or json")
	fs.StringVar(&svgDir, "svg", "", "write SVG charts (mean, p99, variance vs p) to this directory")
	pos, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := cmd.noArgs(pos); err != nil {
		return err
	}
	if len(policies) == 0 {
		policies = sched.Policies()
	}
	p.PeerBW = bw * 125e6
	p.Codes = codes
	p.NoPeerOrder = !*peerOrder
	switch {
	case p.Objects < 0:
		return errors.New("sim: --objects must not be negative")
	case p.Peers < 1 || p.Gateways < 1 || p.Slots < 1 || p.Requests < 1 || seeds < 1 || p.MaxSize < 1:
		return errors.New("sim: --peers, --gateways, --fetch-pool, --requests, --seeds and --max-size must be positive")
	case slices.ContainsFunc(p.Codes, func(c [2]int) bool { return c[0] > p.Peers }):
		return fmt.Errorf("sim: --codes: a code is wider than %d peers", p.Peers)
	case format != "table" && format != "json":
		return fmt.Errorf("sim: --format %q: want table or json", format)
	}
	for _, r := range rhos {
		if r <= 0 {
			return fmt.Errorf("sim: --rho %g must be positive", r)
		}
	}
	for _, b := range bursts {
		if b < 1 {
			return fmt.Errorf("sim: --burst %d must be positive", b)
		}
	}
	var live []sim.Row
	if *against != "" {
		var err error
		if live, err = readRuns(*against); err != nil {
			return err
		}
	}
	start := time.Now()
	rows, err := sim.Sweep(p, policies, rhos, bursts, seeds, nil)
	if err != nil {
		return err
	}
	switch {
	case live != nil:
		err = sim.WriteAgreement(stdout, sim.Agree(rows, live))
	case format == "json":
		out := slices.Clone(rows)
		for i := range out {
			if !*perBurst {
				out[i].BurstMeans, out[i].SeedMeans = nil, nil
			}
		}
		err = sim.WriteJSON(stdout, out)
	default:
		fmt.Fprintf(stdout, "%d peers, %d gateway(s), L=%d, hetero=%v, mixed-nics=%v, codes=%s, peer-order=%v, %d GETs x %d seeds per point, %s\n\n",
			p.Peers, p.Gateways, p.Slots, p.Hetero, p.Mixed, codes.String(), !p.NoPeerOrder, p.Requests, seeds, time.Since(start).Round(time.Millisecond))
		err = sim.WriteTable(stdout, rows)
	}
	if err != nil {
		return err
	}
	if svgDir != "" {
		files, err := sim.WriteSVGs(svgDir, rows)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d charts to %s\n", len(files), svgDir)
	}
	return nil
}

// floatList parses comma-separated floats.
type floatList []float64

func (l *floatList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l *floatList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return err
		}
		*l = append(*l, x)
	}
	return nil
}

// codeList parses comma-separated K+M codes into (n, k) pairs.
type codeList [][2]int

func (l *codeList) String() string {
	if len(*l) == 0 {
		return "default"
	}
	s := make([]string, len(*l))
	for i, c := range *l {
		s[i] = fmt.Sprintf("%d+%d", c[1], c[0]-c[1])
	}
	return strings.Join(s, ",")
}

func (l *codeList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		c, err := meta.ParseCode(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		*l = append(*l, [2]int{c.N(), c.K})
	}
	return nil
}

// intList parses comma-separated integers.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		*l = append(*l, x)
	}
	return nil
}

// registerSched adds the read scheduler flags of server and gateway.
func registerSched(fs *flag.FlagSet, policy *string, pool *int) {
	fs.StringVar(policy, "sched", sched.DefaultPolicy, "read scheduling policy: "+strings.Join(sched.Policies(), ", "))
	fs.IntVar(pool, "fetch-pool", 20, "shard fetches in flight per gateway (the pool size L)")
}

// registerGetMemory adds the bound on GETs' chunk buffers.
func registerGetMemory(fs *flag.FlagSet, n *int64) {
	fs.Int64Var(n, "get-memory", object.DefaultWindowMemory, "bytes of shard chunks all GETs together hold in memory at once; a large GET reads ahead only while there is room")
}

// registerSendLimit adds the peer's benchmark pacing flags.
func registerSendLimit(fs *flag.FlagSet, l *peer.SendLimit) {
	fs.Float64Var(&l.Rate, "max-send-rate", 0, "pace shard streams to this many bytes/s in total, to emulate a slower NIC or, just below the NIC's speed, to send the smallest reads first (0: unlimited; 125e6 is 1 GbE)")
	fs.DurationVar(&l.Delay, "chunk-delay", 0, "wait this long before each shard stream, to emulate a seek")
}

// readRuns reads a `--format json` output of tessera bench or sim.
func readRuns(path string) ([]sim.Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	defer f.Close()
	return sim.ReadJSON(f)
}
