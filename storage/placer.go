package storage

import (
	"fmt"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// Placer tells a store where the cluster's current layout puts keys, so
// that the store can tell a copy moved away from one still in place.
type Placer interface {
	// Placed reports whether the current layout puts a shard of
	// bucket/key, in a code n shards wide, on this store's peer.
	Placed(bucket, key string, n int) (bool, error)
}

// placerBox lets SetPlacer store an interface value atomically.
type placerBox struct{ p Placer }

// SetPlacer gives the store its peer's view of the layout; the peer sets
// it once it has joined the cluster. Until then (and in a store used
// alone) no placement is known, and DropVersion keeps every locked copy.
func (s *Store) SetPlacer(p Placer) { s.placer.Store(&placerBox{p: p}) }

// dropForbidden decides whether DropVersion may remove cur, the copy this
// peer holds. A copy under a legal hold or a running retention (of either
// mode: a drop carries no governance consent) goes only from a peer the
// current layout no longer places the key on: the last step of moving it
// (object.MigrateObject) or of clearing a stray copy, both of which run
// after the version is whole on its new peers. A crafted drop aimed at a
// peer that holds the key where it belongs is refused, so no peer call
// removes a locked version from its placement, as object lock requires of
// every path. Tombstones and unlocked versions may always go.
func (s *Store) dropForbidden(cur *meta.Object, now time.Time) error {
	if cur == nil || cur.Deleted {
		return nil
	}
	if objectlock.CheckDelete(objectlock.StateOf(cur.Headers), now, false) == nil {
		return nil
	}
	placed, err := true, error(nil) // no layout known: assume in place
	if b := s.placer.Load(); b != nil && b.p != nil {
		placed, err = b.p.Placed(cur.Bucket, cur.Key, cur.Code.N())
	}
	switch {
	case err != nil:
		return fmt.Errorf("drop of locked %s/%s %v: placement unknown (%w): %w", cur.Bucket, cur.Key, cur.Stamp, err, meta.ErrObjectLocked)
	case placed:
		return fmt.Errorf("drop of locked %s/%s %v from a peer its placement holds: %w", cur.Bucket, cur.Key, cur.Stamp, meta.ErrObjectLocked)
	}
	return nil
}
