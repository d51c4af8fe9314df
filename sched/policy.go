package sched

import (
	"errors"
	"fmt"
	"time"

	"tessera/meta"
)

// Policy orders the shards of one read. peers[i] holds shard i; indexes
// below k are data shards. Order returns a permutation of 0..len(peers)-1:
// the first k are fetched first, the rest are fallbacks in order. An empty
// peer ID means the shard has no known holder. Order must not block.
type Policy interface {
	Name() string
	Order(peers []meta.PeerID, k int, shardBytes int64) []int
}

// ErrUnknownPolicy reports a policy name New does not know.
var ErrUnknownPolicy = errors.New("sched: unknown policy")

// DefaultPolicy is the policy a gateway uses unless configured otherwise.
const DefaultPolicy = "eta"

// Names lists the policies New accepts.
func Names() []string { return []string{"eta", "random"} }

// New returns the named policy reading t. Random is seeded from the clock.
func New(name string, t *Tracker) (Policy, error) {
	switch name {
	case "eta", "default", "":
		return NewETA(t, ETAConfig{}), nil
	case "random":
		return NewRandom(uint64(time.Now().UnixNano())), nil
	}
	return nil, fmt.Errorf("%w %q (have %v)", ErrUnknownPolicy, name, Names())
}

// identity returns 0..n-1.
func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
