package storage

import (
	"strings"
	"sync"

	"github.com/google/btree"

	"tessera/meta"
)

// Listing limits: a non-positive limit means DefaultListLimit, and no call
// returns more than MaxListLimit entries.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 10000
)

// bucketIndex holds the latest entry per key of one bucket, sorted by key,
// and how many of them are live (not tombstones).
type bucketIndex struct {
	tree *btree.BTreeG[meta.Entry]
	live int
}

type index struct {
	mu sync.RWMutex
	b  map[string]*bucketIndex
}

func newIndex() *index { return &index{b: make(map[string]*bucketIndex)} }

func entryLess(a, b meta.Entry) bool { return a.Key < b.Key }

// put records e as the latest entry of its key.
func (x *index) put(bucket string, e meta.Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	bi := x.b[bucket]
	if bi == nil {
		bi = &bucketIndex{tree: btree.NewG(32, entryLess)}
		x.b[bucket] = bi
	}
	if old, ok := bi.tree.ReplaceOrInsert(e); ok && !old.Deleted {
		bi.live--
	}
	if !e.Deleted {
		bi.live++
	}
}

// remove forgets key (its record was dropped from this peer).
func (x *index) remove(bucket, key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	bi := x.b[bucket]
	if bi == nil {
		return
	}
	if old, ok := bi.tree.Delete(meta.Entry{Key: key}); ok && !old.Deleted {
		bi.live--
	}
}

// live returns the number of live objects in bucket.
func (x *index) live(bucket string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if bi := x.b[bucket]; bi != nil {
		return bi.live
	}
	return 0
}

func (x *index) drop(bucket string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.b, bucket)
}

// list returns up to limit entries with key > after and the prefix, in key
// order. Keys with a prefix are contiguous in key order, so the walk stops
// at the first key without it.
func (x *index) list(bucket, prefix, after string, limit int) []meta.Entry {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	x.mu.RLock()
	defer x.mu.RUnlock()
	bi := x.b[bucket]
	if bi == nil {
		return []meta.Entry{}
	}
	start := max(prefix, after)
	out := make([]meta.Entry, 0, min(limit, 64))
	bi.tree.AscendGreaterOrEqual(meta.Entry{Key: start}, func(e meta.Entry) bool {
		if e.Key == after {
			return true
		}
		if !strings.HasPrefix(e.Key, prefix) {
			return false
		}
		out = append(out, e)
		return len(out) < limit
	})
	return out
}
