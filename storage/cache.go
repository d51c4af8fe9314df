package storage

import "github.com/cockroachdb/pebble/v2"

// IndexCache is a block cache several stores' indexes share: the peers of
// one process (tessera server) then have one bound on their index memory,
// whatever the object count and however the keys spread over them, rather
// than one per peer.
type IndexCache struct{ c *pebble.Cache }

// NewIndexCache returns a cache of the given size in bytes. Close it once
// the stores are open; each store holds a reference of its own until it
// closes.
func NewIndexCache(bytes int64) *IndexCache { return &IndexCache{c: pebble.NewCache(bytes)} }

// Close drops the caller's reference.
func (c *IndexCache) Close() { c.c.Unref() }

func (c *IndexCache) pebble() *pebble.Cache {
	if c == nil {
		return nil
	}
	return c.c
}
