package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"tessera/object"
)

// CORS configurations are read on every cross-origin request; the cache
// spares a peer fan-out per request. A change made through another
// gateway shows up here within corsCacheTTL.
const (
	corsCacheTTL = 5 * time.Second
	corsCacheMax = 4096
)

// corsState is what the gateway knows of a bucket's CORS: its
// configuration (nil when it has none), or that the bucket does not
// exist. A preflight tells the two apart; actual requests do not.
type corsState struct {
	cfg      *corsConfig
	noBucket bool
}

type corsEntry struct {
	corsState
	at time.Time
}

type corsCache struct {
	mu sync.Mutex
	m  map[string]corsEntry
}

func newCORSCache() *corsCache { return &corsCache{m: map[string]corsEntry{}} }

// get returns the bucket's CORS state. A backend without a configuration
// store reports every bucket as existing without configuration. Failures
// to read are returned and not cached.
func (c *corsCache) get(ctx context.Context, be Backend, bucket string) (corsState, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < corsCacheTTL {
		return e.corsState, nil
	}
	cs, ok := be.(configStore)
	if !ok {
		return corsState{}, nil
	}
	st, err := readCORS(ctx, cs, bucket)
	if err != nil {
		return corsState{}, err
	}
	c.mu.Lock()
	if len(c.m) >= corsCacheMax {
		// Unknown bucket names cost an entry each; dropping everything
		// keeps the map bounded at the price of a few extra reads.
		clear(c.m)
	}
	c.m[bucket] = corsEntry{corsState: st, at: now}
	c.mu.Unlock()
	return st, nil
}

func readCORS(ctx context.Context, cs configStore, bucket string) (corsState, error) {
	data, err := cs.GetBucketConfig(ctx, bucket, corsConfigName)
	switch {
	case errors.Is(err, object.ErrNoBucketConfig):
		return corsState{}, nil
	case errors.Is(err, object.ErrBucketNotFound):
		return corsState{noBucket: true}, nil
	case err != nil:
		return corsState{}, err
	}
	cfg, err := parseCORS(data)
	if err != nil {
		return corsState{}, err
	}
	return corsState{cfg: cfg}, nil
}

func (c *corsCache) forget(bucket string) {
	c.mu.Lock()
	delete(c.m, bucket)
	c.mu.Unlock()
}
