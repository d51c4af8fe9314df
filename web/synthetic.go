package web

import (
	"fmt"
	"math"
	"math/rand"
	"time"
)

// Synthetic returns a plausible status of a gateway and n peers, every
// figure filled, for exercising the page at scale without a cluster. The
// same seed gives the same status.
func Synthetic(n int, seed int64) Status {
	rnd := rand.New(rand.NewSource(seed))
	f := func(v float64) *float64 { return &v }
	i64 := func(v int64) *int64 { return &v }
	epoch := uint64(7)
	moving := true
	settled := epoch - 1
	st := Status{
		Version: "synthetic", NodeID: "gateway-1", Time: time.Unix(1_800_000_000, 0).UTC(), Code: "4+2",
		Nodes: []Node{{ID: "gateway-1", Role: "gateway", State: "alive", ThroughputSend: f(9e8),
			ThroughputRecv: f(4e8), CPU: f(0.42), ActiveRequests: i64(37)}},
		Errors: []LogLine{},
	}
	zones := []string{"a", "b", "c", "d"}
	var totalW float64
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = float64(1 + rnd.Intn(4))
		totalW += weights[i]
	}
	var sumP float64
	for i := 0; i < n; i++ {
		w := weights[i] / totalW
		share := w * (0.8 + 0.4*rnd.Float64())
		p := share / w
		sumP += p
		capacity := uint64(weights[i] * 4e12)
		state := "alive"
		switch {
		case i%37 == 5:
			state = "dead"
		case i%23 == 7:
			state = "suspect"
		}
		st.Nodes = append(st.Nodes, Node{
			ID: fmt.Sprintf("peer-%03d", i+1), Role: "peer", State: state, Zone: zones[i%len(zones)],
			Address: fmt.Sprintf("10.0.%d.%d:9100", i/250, i%250+1), CapacityBytes: capacity,
			FreeBytes: uint64(float64(capacity) * rnd.Float64()), ThroughputSend: f(rnd.Float64() * 4e8),
			ThroughputRecv: f(rnd.Float64() * 2e8), CPU: f(rnd.Float64()), ActiveRequests: i64(int64(rnd.Intn(50))),
			Vnodes: int(weights[i] * 64), Share: share, Weight: w, P: f(p),
		})
	}
	mean := 1.0
	if n > 0 {
		mean = sumP / float64(n)
	}
	st.Ring = Ring{Epoch: &epoch, Peers: n, Vnodes: 0, PMean: f(mean), PLow: f(mean * 0.85), PHigh: f(mean * 1.15),
		BandSource: "balancer", Moving: &moving, OlderLayouts: 1, Settled: &settled}
	for _, nd := range st.Nodes {
		st.Ring.Vnodes += nd.Vnodes
	}
	size, inUse, queue := 64, 41, 12
	st.Scheduler = Scheduler{Policy: "eta", PoolSize: &size, PoolInUse: &inUse, Queue: &queue,
		GetP50: f(0.012), GetP95: f(0.048), GetP99: f(0.131)}
	for i := 0; i < n; i++ {
		chosen := uint64(rnd.Intn(5000))
		st.Scheduler.Peers = append(st.Scheduler.Peers, PeerChoice{ID: fmt.Sprintf("peer-%03d", i+1), Chosen: chosen,
			Skipped: uint64(rnd.Intn(2000)), InFlightBytes: int64(rnd.Intn(1 << 26)), Throughput: rnd.Float64() * 3e8,
			Failing: i%37 == 5})
	}
	st.S3 = S3{Requests: 1234567, Errors: 12, BytesIn: 9 << 40, BytesOut: 21 << 40, InFlight: 37}
	st.Repair = Progress{Pending: i64(120), Done: i64(880), Failed: i64(3), Running: &moving}
	st.Rebalance = Progress{Pending: i64(4000), Done: i64(16000), Failed: i64(0), Running: &moving}
	last := st.Time.Add(-10 * time.Minute)
	st.Lifecycle = &Lifecycle{Passes: 12, Expired: 48213, Noncurrent: 902, Aborted: 17, Errors: 1, LastPass: &last}
	st.Upgrades = []Upgrade{{Dir: "/data/peer-007", Moved: 40000, Total: 100000, Started: st.Time.Add(-time.Minute)}}
	st.Buckets = BucketScan{Scanned: st.Time, Cap: 10000}
	for i := 0; i < 12; i++ {
		st.Buckets.Buckets = append(st.Buckets.Buckets, Bucket{Name: fmt.Sprintf("bucket-%02d", i),
			Objects: int64(rnd.Intn(10000)), Bytes: int64(math.Pow(2, 20+rnd.Float64()*20)), Capped: i == 3})
	}
	st.Errors = append(st.Errors, LogLine{Time: st.Time, Level: "warn", Message: "peer-006: shard fetch timed out"})
	return st
}
