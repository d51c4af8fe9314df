package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// opTimeout bounds one request of the load: long enough for a write that
// waits out a dead peer's timeouts, short enough to end a scenario.
const opTimeout = 60 * time.Second

// loadSizes mixes objects inlined in their records with one-block and
// multi-block ones.
var loadSizes = []int{1 << 10, 48 << 10, 300 << 10, 1<<20 + 333}

// load drives PUTs, overwrites, DELETEs and checked GETs of a key space
// through every gateway, recording each write in a ledger, until stopped.
// Each key belongs to one worker, so its operations never overlap.
type load struct {
	bucket   string
	l        *ledger
	cores    []*minio.Core
	reads    tally        // GETs during the run, judged against the ledger
	order    tally        // sequential writes read back through another gateway
	rejected atomic.Int64 // 4xx answers to valid requests
	seq      []seqCount   // per gateway, the sequential writer's writes
	firstMu  sync.Mutex
	first    []string

	mu      sync.Mutex
	samples []sample
	marks   []phaseMark

	stop chan struct{}
	wg   sync.WaitGroup
}

// seqCount is how many sequential writes went to one gateway and how
// many it acknowledged.
type seqCount struct{ sent, acked atomic.Int64 }

type sample struct {
	at   time.Time
	took time.Duration
	o    outcome
}

type phaseMark struct {
	name string
	at   time.Time
}

// noRetryCores are clients for each S3 endpoint that report every error
// as it comes: minio-go would otherwise retry 503s and hide them.
func noRetryCores(t testing.TB, access, secret string, addrs ...string) []*minio.Core {
	t.Helper()
	var out []*minio.Core
	for _, a := range addrs {
		core, err := minio.NewCore(a, &minio.Options{
			Creds: credentials.NewStaticV4(access, secret, ""), Region: "us-east-1", MaxRetries: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, core)
	}
	return out
}

// startLoad starts workers goroutines, each on keysPer keys of its own,
// plus, with two gateways or more, one sequential writer alternating
// between them.
func startLoad(bucket string, cores []*minio.Core, workers, keysPer int) *load {
	ld := &load{bucket: bucket, l: newLedger(), cores: cores, seq: make([]seqCount, len(cores)), stop: make(chan struct{})}
	ld.mark("before")
	for w := range workers {
		keys := make([]string, keysPer)
		for i := range keys {
			keys[i] = fmt.Sprintf("w%d/k%03d", w, i)
		}
		ld.wg.Add(1)
		go ld.worker(w, keys)
	}
	if len(cores) > 1 {
		ld.wg.Add(1)
		go ld.sequential("seq")
	}
	return ld
}

func (ld *load) mark(name string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.marks = append(ld.marks, phaseMark{name, time.Now()})
}

func (ld *load) stopped() bool {
	select {
	case <-ld.stop:
		return true
	default:
		return false
	}
}

// finish stops the workers and waits for their last requests.
func (ld *load) finish() {
	ld.mark("end")
	close(ld.stop)
	ld.wg.Wait()
}

func (ld *load) worker(w int, keys []string) {
	defer ld.wg.Done()
	rnd := mathrand.New(mathrand.NewPCG(uint64(w), 14))
	for i := 0; !ld.stopped(); i++ {
		key := keys[rnd.IntN(len(keys))]
		gw := (w + i) % len(ld.cores)
		switch r := rnd.IntN(10); {
		case r < 6:
			seed := int64(w)<<32 | int64(i)
			ld.put(gw, key, payload(seed, loadSizes[rnd.IntN(len(loadSizes))]))
		case r < 7:
			ld.remove(gw, key)
		case r < 8:
			ld.removeBatch(gw, keys, rnd)
		default:
			ld.read(gw, key, &ld.reads)
		}
	}
}

// sequential writes key over and over, each time through the next
// gateway, and reads every acknowledged write back through another one:
// a write that starts after another was acknowledged must win.
func (ld *load) sequential(key string) {
	defer ld.wg.Done()
	for i := 0; !ld.stopped(); i++ {
		gw := i % len(ld.cores)
		ld.seq[gw].sent.Add(1)
		if ld.put(gw, key, fmt.Appendf(nil, "seq-%08d", i)) == acked {
			ld.seq[gw].acked.Add(1)
			ld.read(gw+1, key, &ld.order)
		}
	}
}

// call runs f on the gateway at index start, and on the next ones while
// the connection is refused: a client fails over to a live gateway.
func (ld *load) call(start int, f func(ctx context.Context, core *minio.Core) error) error {
	var err error
	for j := range ld.cores {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		err = f(ctx, ld.cores[(start+j)%len(ld.cores)])
		cancel()
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return err
		}
	}
	return err
}

func (ld *load) put(gw int, key string, data []byte) outcome {
	start := time.Now()
	err := ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		_, err := core.PutObject(ctx, ld.bucket, key, bytes.NewReader(data), int64(len(data)), "", "", minio.PutObjectOptions{})
		return err
	})
	return ld.done(start, key, contentState(data), "PUT", err)
}

func (ld *load) remove(gw int, key string) outcome {
	start := time.Now()
	err := ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		return core.RemoveObject(ctx, ld.bucket, key, minio.RemoveObjectOptions{})
	})
	return ld.done(start, key, absent, "DELETE", err)
}

// removeBatch deletes up to three of keys in one DeleteObjects request
// and records each key's outcome: the batch path commits each peer's
// share of the tombstones in one write, and each key must still be
// acknowledged only once its own tombstone is on a write quorum.
func (ld *load) removeBatch(gw int, keys []string, rnd *mathrand.Rand) {
	start := time.Now()
	batch := make([]string, 0, 3)
	for _, i := range rnd.Perm(len(keys))[:min(3, len(keys))] {
		batch = append(batch, keys[i])
	}
	errs := map[string]error{}
	ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		objs := make(chan minio.ObjectInfo, len(batch))
		for _, k := range batch {
			objs <- minio.ObjectInfo{Key: k}
		}
		close(objs)
		clear(errs)
		for e := range core.RemoveObjects(ctx, ld.bucket, objs, minio.RemoveObjectsOptions{}) {
			errs[e.ObjectName] = e.Err
		}
		return errs[batch[0]] // a refused connection fails every key: try the next gateway
	})
	for _, k := range batch {
		ld.done(start, k, absent, "DELETE (batch)", errs[k])
	}
}

// done records a write in the ledger and its latency.
func (ld *load) done(start time.Time, key string, state keyState, op string, err error) outcome {
	o := classify(err)
	ld.l.record(key, state, o)
	ld.mu.Lock()
	ld.samples = append(ld.samples, sample{at: start, took: time.Since(start), o: o})
	ld.mu.Unlock()
	switch {
	case o == refused && minio.ToErrorResponse(err).StatusCode != 0:
		ld.rejected.Add(1)
		ld.note("%s %s refused: %v", op, key, err)
	case o == unknown:
		ld.note("%s %s outcome unknown: %v", op, key, err)
	}
	return o
}

func (ld *load) note(format string, args ...any) {
	ld.firstMu.Lock()
	defer ld.firstMu.Unlock()
	if len(ld.first) < 10 {
		ld.first = append(ld.first, fmt.Sprintf(format, args...))
	}
}

// read GETs key and judges what it saw against the ledger.
func (ld *load) read(gw int, key string, ta *tally) {
	var seen keyState
	err := ld.call(gw, func(ctx context.Context, core *minio.Core) error {
		var err error
		seen, err = getState(ctx, core, ld.bucket, key)
		return err
	})
	v := ld.l.judge(key, seen, err)
	ta.add(v, "GET %s: saw %s, ledger allows %v (%v)", key, seen, ld.l.allowed(key), err)
}

// getState reads key whole: absent on 404, an error on any other failure,
// a body cut off included.
func getState(ctx context.Context, core *minio.Core, bucket, key string) (keyState, error) {
	body, info, _, err := core.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).StatusCode == 404 {
			return absent, nil
		}
		return absent, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil || int64(len(b)) != info.Size {
		return absent, fmt.Errorf("body cut off after %d of %d bytes: %v", len(b), info.Size, err)
	}
	return contentState(b), nil
}

// phaseStat is what the load did between two marks.
type phaseStat struct {
	name     string
	secs     float64
	took     []time.Duration // of acknowledged writes
	unk, ref int
}

func (p phaseStat) rate() float64 { return float64(len(p.took)) / p.secs }

// phases splits the writes by the phase they started in.
func (ld *load) phases() []phaseStat {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	var out []phaseStat
	for i := 0; i+1 < len(ld.marks); i++ {
		from, to := ld.marks[i].at, ld.marks[i+1].at
		p := phaseStat{name: ld.marks[i].name, secs: to.Sub(from).Seconds()}
		for _, s := range ld.samples {
			if s.at.Before(from) || !s.at.Before(to) {
				continue
			}
			switch s.o {
			case acked:
				p.took = append(p.took, s.took)
			case unknown:
				p.unk++
			case refused:
				p.ref++
			}
		}
		out = append(out, p)
	}
	return out
}

// report logs, for each phase between marks, the writes done, their rate
// and latency, and how many were ambiguous.
func (ld *load) report(t testing.TB) {
	for _, p := range ld.phases() {
		t.Logf("phase %-8s %5.1f s: %4d acknowledged writes (%5.1f/s), p50 %s, p99 %s, max %s; %d unknown, %d refused",
			p.name, p.secs, len(p.took), p.rate(),
			quantile(p.took, 0.5), quantile(p.took, 0.99), quantile(p.took, 1), p.unk, p.ref)
	}
	ack, ref, unk := ld.l.counts()
	t.Logf("ledger: %d keys, %d writes acknowledged, %d unknown, %d refused; reads during the run: %s",
		len(ld.l.keys), ack, unk, ref, &ld.reads)
	for _, f := range ld.first {
		t.Log("  " + f)
	}
	if len(ld.cores) > 1 {
		t.Logf("sequential writes through alternating gateways, read back through the other: %s", &ld.order)
		for i := range ld.seq {
			t.Logf("  through gateway %d: %d of %d acknowledged", i, ld.seq[i].acked.Load(), ld.seq[i].sent.Load())
		}
	}
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond)
}

// checkLedger reads every key of the ledger through every gateway and
// judges it, and requires each gateway's listing to name exactly the keys
// its GETs found.
func checkLedger(t testing.TB, l *ledger, cores []*minio.Core, bucket string) *tally {
	t.Helper()
	var ta tally
	for gi, core := range cores {
		found := map[string]bool{}
		for _, key := range l.keyList() {
			ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
			seen, err := getState(ctx, core, bucket, key)
			cancel()
			ta.add(l.judge(key, seen, err), "gateway%d GET %s: saw %s, ledger allows %v (%v)", gi+1, key, seen, l.allowed(key), err)
			found[key] = seen.present
		}
		listed := listKeys(t, core, bucket)
		for _, key := range l.keyList() {
			if listed[key] != found[key] {
				ta.add(vWrong, "gateway%d: %s listed %v, but GET found it %v", gi+1, key, listed[key], found[key])
			}
		}
	}
	return &ta
}

func listKeys(t testing.TB, core *minio.Core, bucket string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	for o := range core.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s: %v", bucket, o.Err)
		}
		out[o.Key] = true
	}
	return out
}

// requireClean fails t unless the check found every key in a state the
// ledger allows.
func requireClean(t testing.TB, what string, ta *tally) {
	t.Helper()
	t.Logf("%s: %s", what, ta)
	ta.logFirst(t)
	if ta.get(vLost)+ta.get(vWrong)+ta.get(vResurrected)+ta.get(vUnreadable) > 0 {
		t.Errorf("%s: want 0 lost, 0 wrong, 0 resurrected, 0 unreadable", what)
	}
}
