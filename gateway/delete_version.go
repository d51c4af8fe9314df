package gateway

import (
	"bytes"
	"context"
	"errors"
	"time"

	"tessera/object"
	"tessera/objectlock"
	"tessera/versioning"
)

// deleteOutcome is what a delete did, for its headers or its Deleted
// entry: the version it removed or the delete marker it wrote ("" in a
// bucket that was never versioned), and whether that was a marker.
type deleteOutcome struct {
	versionID string
	marker    bool
	versioned bool // the delete was of a version or wrote a marker
}

// deleted is the DeleteObjects entry for a delete of key at versionID:
// in a versioned bucket it says whether a marker was written or removed.
func (d deleteOutcome) deleted(key, versionID string) deletedXML {
	out := deletedXML{Key: key, VersionID: versionID}
	if d.versioned {
		out.DeleteMarker = &d.marker
	}
	if d.marker {
		out.DeleteMarkerVersionID = d.versionID
	}
	return out
}

// deleteVersion is DELETE as S3 does it. With a version ID it removes
// that version for good (a delete marker included). Without one, a bucket
// that was never versioned loses the key, while a versioned bucket keeps
// every version and gets a delete marker as its latest: a new version when
// versioning is enabled, the null version when it is suspended.
func (g *gateway) deleteVersion(ctx context.Context, bucket, key, versionID string, cond deleteConditions, bypass bool) (deleteOutcome, error) {
	if versionID != "" {
		return g.removeVersion(ctx, bucket, key, versionID, cond, bypass)
	}
	st, err := g.versioningStatus(ctx, bucket)
	if err != nil {
		return deleteOutcome{}, err
	}
	if st == versioning.Unversioned {
		return deleteOutcome{}, g.deleteOne(ctx, bucket, key, cond, false)
	}
	if cond.present() {
		if err := g.checkLatest(ctx, bucket, key, cond); err != nil {
			return deleteOutcome{}, err
		}
	}
	stored, id, err := g.newVersion(ctx, bucket, key)
	if err != nil {
		return deleteOutcome{}, err
	}
	if _, err := g.be.PutObject(ctx, bucket, stored, bytes.NewReader(nil), 0, object.PutOptions{DeleteMarker: true}); err != nil {
		return deleteOutcome{}, err
	}
	return deleteOutcome{versionID: id, marker: true, versioned: true}, nil
}

// removeVersion deletes one version of key, unless its object lock
// forbids it (bypass lifts a governance retention). Deleting a version
// that does not exist succeeds, as S3 answers it. The check here, on the
// version the delete itself resolves (one metadata read), answers early;
// the peers holding the version decide again as they write the
// tombstone, which carries bypass, so a lock set in between still holds.
func (g *gateway) removeVersion(ctx context.Context, bucket, key, versionID string, cond deleteConditions, bypass bool) (deleteOutcome, error) {
	t, err := g.resolve(ctx, bucket, key, versionID)
	if isCode(err, errNoSuchVersion) {
		return deleteOutcome{versionID: versionID, versioned: true}, nil
	}
	if err != nil {
		return deleteOutcome{}, err
	}
	marker := false
	check := func(info *object.ObjectInfo) error {
		if info != nil {
			marker = info.DeleteMarker
			if err := objectlock.CheckDelete(objectlock.StateOf(info.Headers), time.Now(), bypass); err != nil {
				return lockErr(err)
			}
		}
		if cond.present() {
			return cond.check(info)
		}
		return nil
	}
	if err := g.be.DeleteObjectWith(ctx, bucket, t.stored, object.DeleteOptions{Check: check, BypassGovernance: bypass}); err != nil {
		return deleteOutcome{}, err
	}
	return deleteOutcome{versionID: versionID, marker: marker, versioned: true}, nil
}

// checkLatest decides a conditional delete in a versioned bucket against
// the key's latest version (none when that is a delete marker). The check
// and the marker's write are not atomic.
func (g *gateway) checkLatest(ctx context.Context, bucket, key string, cond deleteConditions) error {
	t, err := g.resolve(ctx, bucket, key, "")
	if isCode(err, errNoSuchKey) || (err == nil && t.marker) {
		return cond.check(nil)
	}
	if err != nil {
		return err
	}
	info, err := g.be.HeadObject(ctx, bucket, t.stored)
	if errors.Is(err, object.ErrObjectNotFound) {
		return cond.check(nil)
	}
	if err != nil {
		return err
	}
	return cond.check(&info)
}
