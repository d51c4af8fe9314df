package gateway

import (
	"context"
	"errors"
	"time"

	"tessera/object"
)

// CORS configurations are read on every cross-origin request; the cache
// spares a peer fan-out per request. A change made through another
// gateway shows up here within corsCacheTTL.
const corsCacheTTL = 5 * time.Second

// corsState is what the gateway knows of a bucket's CORS: its
// configuration (nil when it has none), or that the bucket does not
// exist. A preflight tells the two apart; actual requests do not.
type corsState struct {
	cfg      *corsConfig
	noBucket bool
}

type corsCache struct{ *ttlCache[corsState] }

func newCORSCache() *corsCache { return &corsCache{newTTLCache[corsState](corsCacheTTL)} }

// get returns the bucket's CORS state. A backend without a configuration
// store reports every bucket as existing without configuration. Failures
// to read are returned and not cached.
func (c *corsCache) get(ctx context.Context, be Backend, bucket string) (corsState, error) {
	cs, ok := be.(configStore)
	if !ok {
		return corsState{}, nil
	}
	return c.ttlCache.get(bucket, func() (corsState, error) { return readCORS(ctx, cs, bucket) })
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
