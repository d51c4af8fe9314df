package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"tessera/object"
	"tessera/sched"
	"tessera/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeLister serves buckets of n objects of size bytes each, in pages.
type fakeLister struct {
	objects map[string]int
	size    int64
	fail    string
	pages   int
}

func (f *fakeLister) ListBuckets(context.Context) ([]object.BucketInfo, error) {
	var out []object.BucketInfo
	for name := range f.objects {
		out = append(out, object.BucketInfo{Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeLister) ListObjects(_ context.Context, bucket string, opts object.ListOptions) (object.ListResult, error) {
	if bucket == f.fail {
		return object.ListResult{}, errors.New("peers unreachable")
	}
	f.pages++
	start := 0
	if opts.After != "" {
		fmt.Sscanf(opts.After, "k%08d", &start)
		start++
	}
	var res object.ListResult
	for i := start; i < f.objects[bucket] && len(res.Objects) < opts.MaxKeys; i++ {
		res.Objects = append(res.Objects, object.ObjectInfo{Key: fmt.Sprintf("k%08d", i), Size: f.size})
	}
	if n := len(res.Objects); n > 0 && start+n < f.objects[bucket] {
		res.IsTruncated, res.NextAfter = true, res.Objects[n-1].Key
	}
	return res, nil
}

func TestBucketCount(t *testing.T) {
	f := &fakeLister{objects: map[string]int{"empty": 0, "small": 2500, "huge": 25000, "broken": 5}, size: 10, fail: "broken"}
	b := &bucketCounter{src: f, countCap: 10000, log: zerolog.Nop()}
	b.scan(context.Background())
	got := map[string]string{}
	for _, x := range b.snapshot().Buckets {
		got[x.Name] = fmt.Sprintf("%d/%d/%v", x.Objects, x.Bytes, x.Capped)
	}
	want := map[string]string{"empty": "0/0/false", "small": "2500/25000/false", "huge": "10000/100000/true", "broken": "0/0/false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if b.snapshot().Scanned.IsZero() {
		t.Error("scan time not set")
	}
	// A bucket that fails to list keeps its last figures.
	f.fail = "small"
	b.scan(context.Background())
	for _, x := range b.snapshot().Buckets {
		if x.Name == "small" && x.Objects != 2500 {
			t.Errorf("failed bucket lost its figures: %+v", x)
		}
	}
}

func TestBucketScanDue(t *testing.T) {
	b := &bucketCounter{dirtyEvery: 10 * time.Second, cleanEvery: time.Minute}
	start := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	cases := []struct {
		name      string
		now, last time.Time
		changed   bool
		want      bool
	}{
		{"too early for the first", at(time.Second), time.Time{}, false, false},
		{"first scan", at(3 * time.Second), time.Time{}, false, true},
		{"clean, recent", at(30 * time.Second), at(5 * time.Second), false, false},
		{"clean, a minute on", at(66 * time.Second), at(5 * time.Second), false, true},
		{"dirty, too soon", at(10 * time.Second), at(5 * time.Second), true, false},
		{"dirty, due", at(16 * time.Second), at(5 * time.Second), true, true},
	}
	for _, tc := range cases {
		if got := b.due(tc.now, start, tc.last, tc.changed); got != tc.want {
			t.Errorf("%s: due = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBucketCounterStops(t *testing.T) {
	b := startBucketCounter(&fakeLister{}, func() uint64 { return 0 }, zerolog.Nop())
	b.close() // goleak checks the goroutine ended
}

func TestMergePool(t *testing.T) {
	ds := sched.Status{Policy: "load", Slots: 16, InUse: 5, Queued: 9, Finished: 3,
		P50: 10 * time.Millisecond, P95: 20 * time.Millisecond, P99: 40 * time.Millisecond,
		Peers: []sched.PeerStatus{{ID: "p1", Chosen: 7, Skipped: 2, Bytes: 4096, Goodput: 1e6}}}
	var sc web.Scheduler
	mergePool(&sc, ds)
	if sc.Policy != "load" || *sc.PoolSize != 16 || *sc.PoolInUse != 5 || *sc.Queue != 9 {
		t.Errorf("pool figures %+v", sc)
	}
	if sc.GetP50 == nil || *sc.GetP50 != 0.01 || *sc.GetP99 != 0.04 {
		t.Errorf("latency %v %v: want the pool's when S3 has none", sc.GetP50, sc.GetP99)
	}
	if len(sc.Peers) != 1 || sc.Peers[0] != (web.PeerChoice{ID: "p1", Chosen: 7, Skipped: 2, InFlightBytes: 4096, Throughput: 1e6}) {
		t.Errorf("peers %+v", sc.Peers)
	}
	s3 := 0.5
	withS3 := web.Scheduler{GetP50: &s3, GetP95: &s3, GetP99: &s3}
	mergePool(&withS3, ds)
	if *withS3.GetP50 != 0.5 {
		t.Errorf("p50 %v: the S3 latency must stay", *withS3.GetP50)
	}
	idle := web.Scheduler{}
	if mergePool(&idle, sched.Status{Slots: 4}); idle.GetP50 != nil {
		t.Error("latency reported before any read finished")
	}
}
