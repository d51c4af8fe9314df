package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"tessera/meta"
	"tessera/object"
	"tessera/objectlock"
	"tessera/versioning"
)

// Lifecycle in a versioned bucket, as S3 applies it: an Expiration makes
// a delete marker the current version (no bytes are removed),
// ExpiredObjectDeleteMarker removes a marker that is a key's only
// version, and NoncurrentVersionExpiration removes the versions that were
// replaced long enough ago, beyond the newest NewerNoncurrentVersions.
// A version under object lock is kept (a legal hold, or a retention that
// has not run out; the worker never bypasses governance).

// expireVersions applies a versioned bucket's expiry rules to every key.
func (w *Worker) expireVersions(ctx context.Context, bucket string, c *Configuration, st versioning.Status) error {
	if !c.has(func(r *Rule) bool { return r.Expiration != nil || r.NoncurrentVersionExpiration != nil }) {
		return nil
	}
	var failed error
	err := versioning.Scan{Bucket: bucket}.Run(ctx, w.cfg.Store, func(g versioning.Group) bool {
		failed = w.versionGroup(ctx, bucket, c, st, g)
		return failed == nil
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("lifecycle %s: %w", bucket, err)
	}
	return nil
}

// versionGroup applies the rules to one key's versions.
func (w *Worker) versionGroup(ctx context.Context, bucket string, c *Configuration, st versioning.Status, g versioning.Group) error {
	vs, byKey := versioning.Versions(g.Stored)
	if len(vs) == 0 {
		return nil
	}
	clk := w.clock()
	latest := vs[0]
	switch {
	case !latest.DeleteMarker:
		if c.mayExpire(withKey(byKey[latest.StoredKey], g.Key), clk) {
			if err := w.markExpired(ctx, bucket, c, st, g.Key, latest.StoredKey); err != nil {
				return err
			}
		}
	case len(vs) == 1 && c.has(func(r *Rule) bool { return r.RemovesMarker(g.Key) }):
		err := w.removeVersion(ctx, bucket, latest.StoredKey, func(info *object.ObjectInfo) error {
			if !info.DeleteMarker {
				return errNotDue
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := 1; i < len(vs); i++ {
		o := withKey(byKey[vs[i].StoredKey], g.Key)
		since, newer := vs[i-1].ModTime, i-1
		if !c.mayExpireNoncurrent(o, since, newer, clk) {
			continue
		}
		err := w.removeVersion(ctx, bucket, vs[i].StoredKey, func(info *object.ObjectInfo) error {
			o := w.object(*info)
			o.Key = g.Key
			if !c.expiresNoncurrent(o, since, newer, w.clock()) {
				return errNotDue
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// markExpired makes a delete marker key's current version when a rule
// still expires the current version (storedKey) as its record reads now:
// a new version in an enabled bucket, the null version in a suspended
// one. The marker is a conditional write that commits only while
// storedKey is still the latest version, checked right before the commit
// (PutOptions.IfStored): a version written since the scan stays
// current, and a second worker that scanned the same key (while the
// buckets' owners change) finds the first one's marker and writes none.
// Only a write inside the layer's check-to-commit window can still be
// hidden, as by a DELETE at that moment; it stays listed among the
// versions.
func (w *Worker) markExpired(ctx context.Context, bucket string, c *Configuration, st versioning.Status, key, storedKey string) error {
	if err := w.limit.Wait(ctx); err != nil {
		return err
	}
	info, err := w.cfg.Store.HeadObject(ctx, bucket, storedKey)
	if errors.Is(err, object.ErrObjectNotFound) {
		return nil
	}
	if err != nil {
		return w.failed(bucket, key, err)
	}
	o := w.object(info)
	o.Key = key
	if info.DeleteMarker || !c.expires(o, w.clock()) {
		return nil
	}
	marker := key
	if st == versioning.Enabled {
		marker = meta.VersionKey(key, w.cfg.Store.NewVersionID())
	}
	opts := object.PutOptions{DeleteMarker: true, IfMatch: info.ETag, IfStored: storedKey, Current: versioning.Current(w.cfg.Store, bucket, key)}
	_, err = w.cfg.Store.PutObject(ctx, bucket, marker, bytes.NewReader(nil), 0, opts)
	if errors.Is(err, object.ErrPreconditionFailed) || errors.Is(err, object.ErrObjectNotFound) {
		w.log.Debug().Str("bucket", bucket).Str("key", key).Msg("lifecycle: not expired, a newer version or marker came first")
		return nil
	}
	if err != nil {
		return w.failed(bucket, key, err)
	}
	w.count(func(s *Stats) { s.Expired++ })
	w.log.Debug().Str("bucket", bucket).Str("key", key).Msg("object expired: delete marker written")
	return nil
}

// removeVersion deletes one stored version when check, given its record
// as the delete reads it, agrees and its object lock allows.
func (w *Worker) removeVersion(ctx context.Context, bucket, storedKey string, check func(*object.ObjectInfo) error) error {
	if err := w.limit.Wait(ctx); err != nil {
		return err
	}
	err := w.cfg.Store.DeleteObjectWith(ctx, bucket, storedKey, object.DeleteOptions{Check: func(info *object.ObjectInfo) error {
		if info == nil {
			return errNotDue
		}
		if objectlock.CheckDelete(objectlock.StateOf(info.Headers), w.cfg.Now(), false) != nil {
			return errNotDue
		}
		return check(info)
	}})
	switch {
	// A lock set between the check and the delete is the peers' to see:
	// they refuse the tombstone, and the version stays as if not due.
	case errors.Is(err, errNotDue), errors.Is(err, meta.ErrObjectLocked):
		return nil
	case err != nil:
		return w.failed(bucket, storedKey, err)
	}
	w.count(func(s *Stats) { s.Noncurrent++ })
	w.log.Debug().Str("bucket", bucket).Str("key", storedKey).Msg("version expired")
	return nil
}

// failed counts a failed action, which the next pass retries.
func (w *Worker) failed(bucket, key string, err error) error {
	w.count(func(s *Stats) { s.Errors++ })
	w.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).Msg("lifecycle action failed; the next pass retries")
	return nil
}

// object is the rules' view of a stored object, tags read from its record.
func (w *Worker) object(info object.ObjectInfo) Object {
	o := Object{Key: info.Key, Size: info.Size, ModTime: info.ModTime}
	if w.cfg.TagsOf != nil {
		o.Tags = w.cfg.TagsOf(info)
	}
	return o
}

func withKey(info object.ObjectInfo, key string) object.ObjectInfo {
	info.Key = key
	return info
}

// expires reports whether a rule's Expiration expires o, tags included.
func (c *Configuration) expires(o Object, clk Clock) bool {
	for i := range c.Rules {
		if c.Rules[i].Expires(o, clk) {
			return true
		}
	}
	return false
}

// mayExpireNoncurrent is mayExpire for a noncurrent version.
func (c *Configuration) mayExpireNoncurrent(info object.ObjectInfo, since time.Time, newer int, clk Clock) bool {
	o := Object{Key: info.Key, Size: info.Size, ModTime: info.ModTime}
	for i := range c.Rules {
		if c.Rules[i].expiresNoncurrent(o, since, newer, clk, false) {
			return true
		}
	}
	return false
}

// expiresNoncurrent is mayExpireNoncurrent with tags, on the record.
func (c *Configuration) expiresNoncurrent(o Object, since time.Time, newer int, clk Clock) bool {
	for i := range c.Rules {
		if c.Rules[i].ExpiresNoncurrent(o, since, newer, clk) {
			return true
		}
	}
	return false
}
