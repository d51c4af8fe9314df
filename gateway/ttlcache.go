package gateway

import (
	"sync"
	"time"
)

// ttlCacheMax bounds a ttlCache: unknown bucket names cost an entry each,
// and dropping everything at the bound keeps the map small at the price
// of a few extra reads.
const ttlCacheMax = 4096

// ttlCache keeps what the gateway read of each bucket's configuration
// for ttl, so that requests that read it every time (CORS, versioning,
// object lock) spare a peer fan-out each. A change made through this
// gateway drops the entry (forget); one made through another shows up
// within ttl.
type ttlCache[V any] struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

func newTTLCache[V any](ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, m: map[string]ttlEntry[V]{}}
}

// get returns bucket's cached value, or read's, which it caches. A
// failed read is returned and not cached.
func (c *ttlCache[V]) get(bucket string, read func() (V, error)) (V, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.v, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if len(c.m) >= ttlCacheMax {
		clear(c.m)
	}
	c.m[bucket] = ttlEntry[V]{v: v, at: now}
	c.mu.Unlock()
	return v, nil
}

func (c *ttlCache[V]) forget(bucket string) {
	c.mu.Lock()
	delete(c.m, bucket)
	c.mu.Unlock()
}
