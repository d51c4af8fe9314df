package peer

import (
	"fmt"
	"sync"
	"time"
)

// DefaultMaxNonces bounds the replay cache: at two windows of retention it
// admits about 4000 requests per second sustained.
const DefaultMaxNonces = 1 << 20

// nonceCache remembers nonces for at least span, which must cover the
// whole time a timestamp stays acceptable (2*MaxSkew). It keeps two
// generations: a nonce enters cur, moves to prev at the next rotation and
// is dropped at the one after; rotations are at least span apart, so a
// nonce lives at least span. Memory is bounded by max entries; when full
// the cache refuses new nonces instead of evicting live ones, which would
// reopen a replay window.
type nonceCache struct {
	mu        sync.Mutex
	span      time.Duration
	max       int
	cur, prev map[string]struct{}
	rotated   time.Time
}

func newNonceCache(span time.Duration, max int) *nonceCache {
	return &nonceCache{span: span, max: max, cur: map[string]struct{}{}, prev: map[string]struct{}{}}
}

// add records nonce, failing with ErrUnauthorized if it was seen and with
// ErrBusy if the cache is full.
func (c *nonceCache) add(nonce string, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := now.Sub(c.rotated); d >= c.span {
		c.prev = c.cur
		if d >= 2*c.span {
			c.prev = map[string]struct{}{}
		}
		c.cur = map[string]struct{}{}
		c.rotated = now
	}
	_, inCur := c.cur[nonce]
	_, inPrev := c.prev[nonce]
	if inCur || inPrev {
		return fmt.Errorf("%w: replayed nonce", ErrUnauthorized)
	}
	if len(c.cur)+len(c.prev) >= c.max {
		return fmt.Errorf("%w: replay cache full", ErrBusy)
	}
	c.cur[nonce] = struct{}{}
	return nil
}
