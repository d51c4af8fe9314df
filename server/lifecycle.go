package server

import (
	"fmt"
	"hash/fnv"
	"os"
	"time"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/lifecycle"
)

// lifecycleDayEnv shortens the lifecycle day, for tests only: a rule of
// one day then expires objects within seconds, as other stores' test
// suites shorten it.
const lifecycleDayEnv = "TESSERA_LIFECYCLE_DAY"

// lifecycleDay is the length of a lifecycle day: 24 hours, or what
// lifecycleDayEnv says.
func lifecycleDay() (time.Duration, error) {
	v := os.Getenv(lifecycleDayEnv)
	if v == "" {
		return 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration", lifecycleDayEnv, v)
	}
	return d, nil
}

// startLifecycle runs the worker that applies buckets' lifecycle rules.
func (g *Gateway) startLifecycle() error {
	day, err := lifecycleDay()
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.lifecycle = lifecycle.New(lifecycle.Config{Store: g.layer, Owns: g.ownsBucket, TagsOf: gateway.ObjectTags,
		Day: day, Logger: g.cfg.Logger})
	g.lifecycle.Start()
	return nil
}

// ownsBucket reports whether this gateway applies bucket's lifecycle
// rules: each bucket has one owner among the alive gateways, by a hash
// of its name, so that several gateways do not do the same work. A
// gateway that dies hands its buckets to the others as gossip notices.
func (g *Gateway) ownsBucket(bucket string) bool {
	var gws []string
	for _, m := range g.node.Members() { // sorted by ID
		if m.Role == cluster.RoleGateway && m.State == cluster.StateAlive {
			gws = append(gws, m.ID)
		}
	}
	if len(gws) == 0 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(bucket))
	return gws[h.Sum32()%uint32(len(gws))] == g.id
}

// LifecycleStats reports what this gateway's lifecycle worker has done.
func (g *Gateway) LifecycleStats() lifecycle.Stats { return g.lifecycle.Stats() }
