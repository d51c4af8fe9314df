package object

import (
	"fmt"
	"sync"
	"testing"

	"tessera/sched"
)

func newTestPool(t *testing.T, policy string, slots int) *FetchPool {
	t.Helper()
	p, err := NewFetchPool(policy, sched.Config{Slots: slots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Every policy serves concurrent reads through a small pool, and the
// pool ends empty with every read counted.
func TestFetchPoolEveryPolicy(t *testing.T) {
	for _, name := range sched.Policies() {
		t.Run(name, func(t *testing.T) {
			pool := newTestPool(t, name, 3)
			l, fc := newTestLayer(t, func(c *Config) { c.Pool = pool })
			objs := map[string][]byte{}
			for i := range 6 {
				key := fmt.Sprintf("k%d", i)
				objs[key] = randBytes(uint64(i+1), (i+1)*testBlock+17)
				put(t, l, key, objs[key])
			}
			var wg sync.WaitGroup
			for key, data := range objs {
				for range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						mustGet(t, l, key, data)
					}()
				}
			}
			wg.Wait()
			st := pool.Status()
			if st.InUse != 0 || st.Queued != 0 {
				t.Fatalf("pool not empty after reads: %+v", st)
			}
			if st.Fetches < uint64(len(objs)*3*4) {
				t.Fatalf("%d fetches through the pool, want at least %d", st.Fetches, len(objs)*3*4)
			}
			// eta's fetches carry their read's size to the peers.
			var tagged int64
			for _, p := range fc.peers {
				tagged += p.tagged.Load()
			}
			// (A fetch cancelled before it reached its peer is not counted.)
			switch {
			case name == "eta" && 2*tagged < int64(st.Fetches):
				t.Fatalf("%s: %d of %d pooled reads tagged with a priority", name, tagged, st.Fetches)
			case name != "eta" && tagged != 0:
				t.Fatalf("%s: %d pooled reads tagged with a priority, want none", name, tagged)
			}
		})
	}
}

// A granted shard whose peer is down is replaced by the decoder's
// fallback and reported to the pool as failed.
func TestFetchPoolPeerDown(t *testing.T) {
	pool := newTestPool(t, "eta", 4)
	l, fc := newTestLayer(t, func(c *Config) { c.Pool = pool })
	data := randBytes(9, 3*testBlock)
	put(t, l, "k", data)
	peers := placementPeers(fc, "k", 6)
	peers[0].setFault(faultHangRead)
	peers[1].setFault(faultDown)
	for range 3 {
		mustGet(t, l, "k", data)
	}
	if st := pool.Status(); st.InUse != 0 || st.Queued != 0 {
		t.Fatalf("pool not empty: %+v", st)
	}
}

func TestFetchPoolSetPolicy(t *testing.T) {
	pool := newTestPool(t, "eta", 2)
	l, _ := newTestLayer(t, func(c *Config) { c.Pool = pool })
	data := randBytes(3, 2*testBlock)
	put(t, l, "k", data)
	for _, name := range sched.Policies() {
		if err := pool.SetPolicy(name); err != nil {
			t.Fatal(err)
		}
		mustGet(t, l, "k", data)
		if pool.Policy() != name || pool.Status().Finished != 1 {
			t.Fatalf("policy %s: status %+v", name, pool.Status())
		}
	}
	if err := pool.SetPolicy("bogus"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
