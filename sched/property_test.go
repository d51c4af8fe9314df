package sched

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"tessera/meta"
)

// TestDispatcherProperties drives every policy with random reads, peers
// (missing holders and repeated peers included), completions and
// failures, and checks each decision: a Start names a shard index of the
// read whose holder is that peer, a shard is never in flight twice, the
// pool never exceeds its slots, a read finishes only after K distinct
// shards succeeded, and fails only when fewer than K holders are left.
func TestDispatcherProperties(t *testing.T) {
	for _, name := range Policies() {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(40) {
				checkRandomRun(t, name, seed)
			}
		})
	}
}

type flightKey struct {
	req   ReqID
	shard int
}

func checkRandomRun(t *testing.T, name string, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	slots := 1 + rng.IntN(8)
	pool := ids(1 + rng.IntN(8))
	load := fixedLoad{}
	for _, p := range pool {
		load[p] = [2]float64{rng.Float64() * 1e6, rng.Float64()}
	}
	d := newD(t, name, Config{Slots: slots, PeerCap: 1 + rng.IntN(3), Load: load, Seed: seed,
		Window: time.Duration(rng.IntN(3)) * time.Millisecond, Period: time.Millisecond})
	reqs := map[ReqID]Request{}
	succeeded := map[ReqID]map[int]bool{}
	failedShards := map[ReqID]map[int]bool{}
	flying := map[flightKey]bool{}
	ended := map[ReqID]bool{}
	now := time.Duration(0)
	next := ReqID(1)
	handle := func(acts []Action) {
		for _, a := range acts {
			r := reqs[a.Req]
			switch a.Kind {
			case Start:
				if a.Shard < 0 || a.Shard >= len(r.Peers) || r.Peers[a.Shard] == "" || r.Peers[a.Shard] != a.Peer {
					t.Fatalf("seed %d: start %+v on read %+v", seed, a, r)
				}
				k := flightKey{a.Req, a.Shard}
				if flying[k] || succeeded[a.Req][a.Shard] || failedShards[a.Req][a.Shard] {
					t.Fatalf("seed %d: shard %d of read %d started twice", seed, a.Shard, a.Req)
				}
				flying[k] = true
			case Cancel:
				delete(flying, flightKey{a.Req, a.Shard})
			case Finish:
				if len(succeeded[a.Req]) < r.K {
					t.Fatalf("seed %d: read %d finished with %d of %d shards", seed, a.Req, len(succeeded[a.Req]), r.K)
				}
				ended[a.Req] = true
			case Fail:
				usable := 0
				for s, p := range r.Peers {
					if p != "" && !failedShards[a.Req][s] {
						usable++
					}
				}
				if usable >= r.K {
					t.Fatalf("seed %d: read %d failed with %d usable holders for k=%d", seed, a.Req, usable, r.K)
				}
				ended[a.Req] = true
			}
		}
		for k := range flying {
			if ended[k.req] {
				t.Fatalf("seed %d: read %d ended with shard %d still in flight", seed, k.req, k.shard)
			}
		}
		if len(flying) > slots || d.Busy() != len(flying) {
			t.Fatalf("seed %d: %d in flight, busy %d, %d slots", seed, len(flying), d.Busy(), slots)
		}
	}
	for step := 0; step < 400; step++ {
		now += time.Duration(rng.IntN(3)) * time.Millisecond
		switch {
		case rng.IntN(3) == 0 && step < 300:
			n := 1 + rng.IntN(6)
			peers := make([]meta.PeerID, n)
			for i := range peers {
				if rng.IntN(10) > 0 {
					peers[i] = pool[rng.IntN(len(pool))]
				}
			}
			r := Request{ID: next, Peers: peers, K: 1 + rng.IntN(n), ChunkBytes: 1 + rng.Int64N(1000)}
			next++
			reqs[r.ID] = r
			succeeded[r.ID], failedShards[r.ID] = map[int]bool{}, map[int]bool{}
			if err := d.Submit(now, r); err != nil {
				t.Fatal(err)
			}
		case len(flying) > 0:
			var ks []flightKey
			for k := range flying {
				ks = append(ks, k)
			}
			k := ks[rng.IntN(len(ks))]
			delete(flying, k)
			if rng.IntN(5) == 0 {
				failedShards[k.req][k.shard] = true
				d.Done(now, k.req, k.shard, errors.New("boom"), 0)
			} else {
				succeeded[k.req][k.shard] = true
				d.Done(now, k.req, k.shard, nil, reqs[k.req].ChunkBytes)
			}
		}
		handle(d.Dispatch(now, nil))
	}
	// Drain: everything must end.
	for i := 0; i < 10000 && d.Pending() > 0; i++ {
		now += 10 * time.Millisecond
		for k := range flying {
			delete(flying, k)
			succeeded[k.req][k.shard] = true
			d.Done(now, k.req, k.shard, nil, reqs[k.req].ChunkBytes)
			break
		}
		handle(d.Dispatch(now, nil))
	}
	if d.Pending() != 0 {
		t.Fatalf("seed %d: %d reads never ended", seed, d.Pending())
	}
}
