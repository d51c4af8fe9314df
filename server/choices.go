package server

import (
	"sync"

	"tessera/meta"
	"tessera/sched"
)

// choiceCounter wraps the read scheduler and counts, per peer, how often
// it was among the k shards a read fetches first (chosen) and how often it
// held a shard left as a fallback (skipped). Chosen counts are the
// gateway's scheduled shard fetches; fallback fetches after a failure are
// not counted. The embedded Policy passes every other method through.
// With a fetch pool, the pool's own counts replace these (mergePool).
type choiceCounter struct {
	sched.Policy

	mu     sync.Mutex
	counts map[meta.PeerID]*[2]uint64 // chosen, skipped
}

func newChoiceCounter(p sched.Policy) *choiceCounter {
	return &choiceCounter{Policy: p, counts: map[meta.PeerID]*[2]uint64{}}
}

// Order asks the wrapped policy and counts its answer.
func (c *choiceCounter) Order(peers []meta.PeerID, k int, shardBytes int64) []int {
	order := c.Policy.Order(peers, k, shardBytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	for rank, idx := range order {
		if idx < 0 || idx >= len(peers) || peers[idx] == "" {
			continue
		}
		id := peers[idx]
		ct, ok := c.counts[id]
		if !ok {
			ct = new([2]uint64)
			c.counts[id] = ct
		}
		choice := 0
		if rank >= k {
			choice = 1
		}
		ct[choice]++
	}
	return order
}

// snapshot returns the counts per peer.
func (c *choiceCounter) snapshot() map[meta.PeerID][2]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[meta.PeerID][2]uint64, len(c.counts))
	for id, ct := range c.counts {
		out[id] = *ct
	}
	return out
}

// countChoices wraps the gateway's policy for the object layer.
func (g *Gateway) countChoices() *choiceCounter {
	g.choices = newChoiceCounter(g.policy)
	return g.choices
}
