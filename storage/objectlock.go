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
