package storage

import (
	"fmt"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// lockForbids enforces, on this peer, a version's object lock against the
// record replacing it: cur is the key's record, next the one replacing it.
// A tombstone deletes the version, which a legal hold forbids, a
// compliance retention forbids until it ends, and a governance retention
// forbids unless the tombstone carries the caller's consent
// (objectlock.BypassHeader): deciding here, not only in the gateway,
// makes the check and the delete one step, so no request racing a lock
// change slips between them and no crafted peer call skips the check. A
// record of other bytes (another size) overwrites the version in place,
// which no lock allows. A record of the same bytes may extend a
// compliance retention but not shorten it or change its mode; changes to
// a governance retention are weighed by the gateway, since a consent
// given for one record would not travel to a peer that missed it.
func lockForbids(cur, next *meta.Object, now time.Time) error {
	if cur.Deleted {
		return nil
	}
	st := objectlock.StateOf(cur.Headers)
	switch {
	case next.Deleted:
		if objectlock.CheckDelete(st, now, objectlock.Bypassed(next.Headers)) != nil {
			return fmt.Errorf("delete of %s/%s: %w", cur.Bucket, cur.Key, meta.ErrObjectLocked)
		}
		return nil
	case next.Size != cur.Size:
		if st.LegalHold || st.Retention.Retained(now) {
			return fmt.Errorf("overwrite of locked %s/%s: %w", cur.Bucket, cur.Key, meta.ErrObjectLocked)
		}
		return nil
	case st.Retention.Mode != objectlock.Compliance:
		return nil
	}
	if objectlock.CheckRetention(st.Retention, objectlock.StateOf(next.Headers).Retention, now, false) != nil {
		return fmt.Errorf("rewrite of %s/%s under compliance retention until %s: %w",
			cur.Bucket, cur.Key, st.Retention.Until.Format(time.RFC3339), meta.ErrObjectLocked)
	}
	return nil
}

// lockKept refuses a record that replaces the same version (a repair, or
// a relabel: the same stamp) with another lock state. Every lock change
// writes a new version, so at one stamp the lock state is fixed, and a
// same-stamp record that changes it can only be crafted: without this
// check it would lift a hold or a retention that lockForbids guards.
func lockKept(cur, next *meta.Object) error {
	a, b := objectlock.StateOf(cur.Headers), objectlock.StateOf(next.Headers)
	if a.LegalHold != b.LegalHold || a.HoldSet != b.HoldSet || a.Retention.Mode != b.Retention.Mode ||
		!a.Retention.Until.Equal(b.Retention.Until) {
		return fmt.Errorf("rewrite of %s/%s %v with another lock state: %w", cur.Bucket, cur.Key, cur.Stamp, meta.ErrObjectLocked)
	}
	return nil
}
