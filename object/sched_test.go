package object

import (
	"testing"

	"tessera/meta"
)

// reverseScheduler prefers the last shards, and adds junk a buggy policy
// might return.
type reverseScheduler struct{ calls int }

func (s *reverseScheduler) Order(peers []meta.PeerID, k int, shardBytes int64) []int {
	s.calls++
	out := []int{-1, len(peers) + 3}
	for i := len(peers) - 1; i >= 0; i-- {
		out = append(out, i, i)
	}
	return out
}

func TestSchedulerOrderIsFollowed(t *testing.T) {
	s := &reverseScheduler{}
	l, fc := newTestLayer(t, func(c *Config) { c.Scheduler = s })
	data := randBytes(1, 3*testBlock)
	put(t, l, "k", data)
	mustGet(t, l, "k", data)
	if s.calls == 0 {
		t.Fatal("scheduler not consulted")
	}
	peers := placementPeers(fc, "k", 6)
	if n := peers[0].reads.Load() + peers[1].reads.Load(); n != 0 {
		t.Fatalf("%d reads from shards the scheduler ranked last", n)
	}
	for i := 2; i < 6; i++ {
		if peers[i].reads.Load() == 0 {
			t.Fatalf("shard %d, ranked first, was not read", i)
		}
	}
}
