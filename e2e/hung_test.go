package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"tessera/meta"
)

// hungOp is one request of the load: when it started, how long it took.
type hungOp struct {
	put   bool
	start time.Time
	took  time.Duration
	err   error
}

// hungLoad runs workers doing PUTs of new keys (64 KiB–1 MiB) and GETs of
// keys already acknowledged, checked byte-exact, and records every
// request.
type hungLoad struct {
	mc     *minio.Client
	bucket string

	mu    sync.Mutex
	ops   []hungOp
	sizes map[string]int   // acknowledged key → size (the seed is in the key)
	seeds map[string]int64 // acknowledged key → seed
	keys  []string
	wrote map[string]time.Time // key → when its PUT started
	// stored maps a key to the version key its PUT wrote, in a versioned
	// bucket: where its shards are on the peers' disks.
	stored map[string]string
	next   int64
}

func newHungLoad(mc *minio.Client, bucket string) *hungLoad {
	return &hungLoad{mc: mc, bucket: bucket, sizes: map[string]int{}, seeds: map[string]int64{},
		wrote: map[string]time.Time{}, stored: map[string]string{}}
}

func (h *hungLoad) run(ctx context.Context, workers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := mathrand.New(mathrand.NewPCG(uint64(w), 7))
			for ctx.Err() == nil {
				h.mu.Lock()
				n := len(h.keys)
				h.mu.Unlock()
				if n < 8 || rnd.IntN(2) == 0 {
					h.put(ctx, rnd)
				} else {
					h.get(ctx, rnd)
				}
			}
		}()
	}
	return &wg
}

func (h *hungLoad) put(ctx context.Context, rnd *mathrand.Rand) {
	h.mu.Lock()
	h.next++
	seed := h.next
	h.mu.Unlock()
	size := 64<<10 + rnd.IntN(1<<20-64<<10+1)
	key := fmt.Sprintf("k/%06d", seed)
	data := payload(seed, size)
	start := time.Now()
	info, err := h.mc.PutObject(ctx, h.bucket, key, bytes.NewReader(data), int64(size), minio.PutObjectOptions{})
	h.record(ctx, hungOp{put: true, start: start, took: time.Since(start), err: err})
	if err == nil {
		h.mu.Lock()
		h.sizes[key], h.seeds[key], h.wrote[key] = size, seed, start
		if info.VersionID != "" {
			h.stored[key] = meta.VersionKey(key, info.VersionID)
		}
		h.keys = append(h.keys, key)
		h.mu.Unlock()
	}
}

func (h *hungLoad) get(ctx context.Context, rnd *mathrand.Rand) {
	h.mu.Lock()
	key := h.keys[rnd.IntN(len(h.keys))]
	size, seed := h.sizes[key], h.seeds[key]
	h.mu.Unlock()
	start := time.Now()
	err := h.read(ctx, key, size, seed)
	h.record(ctx, hungOp{start: start, took: time.Since(start), err: err})
}

// read GETs key and checks it is the payload it was written with.
func (h *hungLoad) read(ctx context.Context, key string, size int, seed int64) error {
	obj, err := h.mc.GetObject(ctx, h.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, obj); err != nil {
		return fmt.Errorf("get %s: %w", key, err)
	}
	if [32]byte(sum.Sum(nil)) != sha256.Sum256(payload(seed, size)) {
		return fmt.Errorf("get %s: content differs from what was written", key)
	}
	return nil
}

// record keeps op unless it failed because the load was ending.
func (h *hungLoad) record(ctx context.Context, op hungOp) {
	if op.err != nil && ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// hungFigures are one kind of request ended in one window.
type hungFigures struct {
	n, errs  int
	rate     float64 // successful requests per second
	p50, p99 time.Duration
	firstErr error
}

func (f hungFigures) String() string {
	return fmt.Sprintf("%d ok (%.1f/s), %d failed, p50 %v, p99 %v", f.n, f.rate, f.errs,
		f.p50.Round(time.Millisecond), f.p99.Round(time.Millisecond))
}

// figures sums up the requests of kind put that ended in [from, to):
// those in flight when the peer stopped count toward the stop.
func (h *hungLoad) figures(put bool, from, to time.Time) hungFigures {
	h.mu.Lock()
	defer h.mu.Unlock()
	var f hungFigures
	var took []time.Duration
	for _, op := range h.ops {
		end := op.start.Add(op.took)
		if op.put != put || end.Before(from) || !end.Before(to) {
			continue
		}
		if op.err != nil {
			f.errs++
			if f.firstErr == nil {
				f.firstErr = op.err
			}
			continue
		}
		f.n++
		took = append(took, op.took)
	}
	f.rate = float64(f.n) / to.Sub(from).Seconds()
	if len(took) > 0 {
		slices.Sort(took)
		f.p50 = took[(len(took)-1)/2]
		f.p99 = took[(len(took)-1)*99/100]
	}
	return f
}

// timeline is the successful requests started in each second from from
// to to, PUTs/GETs, and the slowest of them, so how soon the stopped peer
// stopped costing anything shows.
func (h *hungLoad) timeline(from, to time.Time) string {
	secs := int(to.Sub(from) / time.Second)
	puts, gets := make([]int, secs), make([]int, secs)
	slow := make([]time.Duration, secs)
	h.mu.Lock()
	for _, op := range h.ops {
		i := int(op.start.Sub(from) / time.Second)
		if op.err != nil || op.start.Before(from) || i >= secs {
			continue
		}
		if op.put {
			puts[i]++
		} else {
			gets[i]++
		}
		slow[i] = max(slow[i], op.took)
	}
	h.mu.Unlock()
	var b bytes.Buffer
	for i := range secs {
		fmt.Fprintf(&b, " %d/%d(%.1fs)", puts[i], gets[i], slow[i].Seconds())
	}
	return b.String()
}

// writtenIn is the objects acknowledged whose PUT started in [from, to).
func (h *hungLoad) writtenIn(from, to time.Time) *objectSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := newObjectSet(h.bucket)
	for key, at := range h.wrote {
		if !at.Before(from) && at.Before(to) {
			set.live[key] = sha256.Sum256(payload(h.seeds[key], h.sizes[key]))
		}
	}
	return set
}

// storedIn is writtenIn under the keys the shards are stored by: a
// version's key in a versioned bucket.
func (h *hungLoad) storedIn(from, to time.Time) *objectSet {
	set := h.writtenIn(from, to)
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, sum := range set.live {
		if stored, ok := h.stored[key]; ok {
			delete(set.live, key)
			set.live[stored] = sum
		}
	}
	return set
}

// TestHungPeer: six peer processes and a gateway under a load of 8
// workers doing PUTs and GETs; one peer is stopped with SIGSTOP for a
// while (TESSERA_SOAK_STOP, default 20 s; the figure is 60 s).
// PUT and GET throughput during the stop must stay at ≥ 50 % of the
// baseline measured right before it, in the same run, with p99 ≤ 2 s;
// after SIGCONT every object written during the stop is repaired to all
// six peers and reads back byte-exact.
func TestHungPeer(t *testing.T) {
	hungPeer(t, false)
}

// TestHungPeerVersioned is TestHungPeer in a versioned bucket, where
// every write also reads the bucket's settings and every GET finds the
// key's latest version by listing: nothing about a hung peer may get
// worse because a bucket is versioned.
func TestHungPeerVersioned(t *testing.T) {
	hungPeer(t, true)
}

func hungPeer(t *testing.T, versioned bool) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts seven tessera processes and stops one for 20 s; run without -short")
	}
	stop := soakDuration(t, "STOP", 20*time.Second)
	baseline := min(stop, 20*time.Second)
	c := newProcCluster(t)
	gw := c.startGateway()
	for range 6 {
		c.startPeer()
	}
	c.waitAlive(6)
	c.waitEpoch(6)
	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	makeBucketSoon(t, mc, "hung")
	if versioned {
		if err := mc.EnableVersioning(context.Background(), "hung"); err != nil {
			t.Fatal(err)
		}
	}
	victim := c.peers[2]
	victim.mu.Lock()
	vproc := victim.cmd.Process
	victim.mu.Unlock()
	// Registered after the cluster's cleanup, so it runs before the
	// processes are stopped: a stopped process ignores SIGTERM.
	t.Cleanup(func() { _ = syscall.Kill(vproc.Pid, syscall.SIGCONT) })

	load := newHungLoad(mc, "hung")
	ctx, cancel := context.WithCancel(context.Background())
	wg := load.run(ctx, 8)
	defer func() {
		cancel()
		wg.Wait()
	}()
	time.Sleep(3 * time.Second) // warm up: connections, first keys to read
	base := time.Now()
	time.Sleep(baseline)
	stopped := time.Now()
	if err := syscall.Kill(vproc.Pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s: %v", victim.name, err)
	}
	time.Sleep(stop)
	resumed := time.Now()
	if err := syscall.Kill(vproc.Pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT %s: %v", victim.name, err)
	}
	time.Sleep(3 * time.Second)
	cancel()
	wg.Wait()

	bPut, bGet := load.figures(true, base, stopped), load.figures(false, base, stopped)
	sPut, sGet := load.figures(true, stopped, resumed), load.figures(false, stopped, resumed)
	t.Logf("baseline %v: PUT %v; GET %v", stopped.Sub(base).Round(time.Second), bPut, bGet)
	t.Logf("%s stopped %v: PUT %v; GET %v", victim.name, resumed.Sub(stopped).Round(time.Second), sPut, sGet)
	t.Logf("PUTs/GETs started each second of the baseline (slowest):%s", load.timeline(base, stopped))
	t.Logf("PUTs/GETs started each second from the stop on (slowest):%s", load.timeline(stopped, resumed))
	t.Logf("during the stop: PUT throughput %.0f %% of baseline, GET %.0f %%",
		100*sPut.rate/bPut.rate, 100*sGet.rate/bGet.rate)
	for _, k := range []struct {
		name      string
		base, got hungFigures
	}{{"PUT", bPut, sPut}, {"GET", bGet, sGet}} {
		if k.base.errs+k.got.errs > 0 {
			t.Errorf("%s: %d failed before the stop, %d during it; first: %v, %v",
				k.name, k.base.errs, k.got.errs, k.base.firstErr, k.got.firstErr)
		}
		if k.got.rate < k.base.rate/2 {
			t.Errorf("%s throughput during the stop %.1f/s, under half the %.1f/s before it", k.name, k.got.rate, k.base.rate)
		}
		if k.got.p99 > 2*time.Second {
			t.Errorf("%s p99 during the stop %v, want ≤ 2 s", k.name, k.got.p99)
		}
	}

	during := load.storedIn(stopped, resumed)
	if len(during.live) == 0 {
		t.Fatal("no PUT acknowledged during the stop")
	}
	if msg := during.redundancy(c.peers, 6); msg == "" {
		t.Fatal("objects written during the stop are fully redundant: the test cannot tell the peer was left out")
	}
	c.waitAlive(6)
	repairStart := time.Now()
	waitFor(t, 180*time.Second, "repair restores all six shards of every object written during the stop", func() error {
		if msg := during.redundancy(c.peers, 6); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
	t.Logf("%d objects written during the stop repaired to 6 of 6 shards %.1f s after the peer was alive again",
		len(during.live), time.Since(repairStart).Seconds())
	all := load.writtenIn(time.Time{}, time.Now())
	all.verify(context.Background(), t, mc)
	t.Logf("all %d acknowledged objects read back byte-exact", len(all.live))
}
