package sched

import (
	"math/rand/v2"
	"sync"

	"tessera/meta"
)

// Random orders shards uniformly at random, ignoring load and failures:
// the baseline every other policy must beat.
type Random struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewRandom returns a Random policy with a deterministic seed.
func NewRandom(seed uint64) *Random {
	return &Random{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Name implements Policy.
func (*Random) Name() string { return "random" }

// Order implements Policy.
func (r *Random) Order(peers []meta.PeerID, _ int, _ int64) []int {
	out := identity(len(peers))
	r.mu.Lock()
	r.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	r.mu.Unlock()
	return out
}
