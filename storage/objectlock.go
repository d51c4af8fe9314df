package storage

import (
	"fmt"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// lockForbids enforces, on this peer, the part of a version's object lock
// no request may lift: while a legal hold is on the version cannot be
// deleted, and while a compliance retention runs it cannot be deleted,
// its retention cannot be shortened or change mode, and its bytes cannot
// change size. A governance retention, which S3 lets a privileged caller
// bypass, is left to the gateway. cur is the key's record, next the one
// replacing it.
func lockForbids(cur, next *meta.Object, now time.Time) error {
	if cur.Deleted {
		return nil
	}
	st := objectlock.StateOf(cur.Headers)
	compliance := st.Retention.Mode == objectlock.Compliance && st.Retention.Retained(now)
	switch {
	case next.Deleted && (st.LegalHold || compliance):
		return fmt.Errorf("delete of %s/%s: %w", cur.Bucket, cur.Key, meta.ErrObjectLocked)
	case next.Deleted || !compliance:
		return nil
	}
	nst := objectlock.StateOf(next.Headers)
	if nst.Retention.Mode != objectlock.Compliance || nst.Retention.Until.Before(st.Retention.Until) || next.Size != cur.Size {
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
