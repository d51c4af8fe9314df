package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"tessera/meta"
	"tessera/object"
	"tessera/objectlock"
	"tessera/versioning"
)

// Bucket versioning at the S3 layer. The setting is the bucket
// configuration versioning.ConfigName; below this layer a version is an
// ordinary object under a version key (see package versioning), so the
// handlers only choose which stored key a request reads or writes.

// A write reads its bucket's settings on every request, so they are
// cached for a moment (ttlCache): a change made through this gateway
// applies at once, one made through another within versioningCacheTTL.
// S3 asks clients to wait up to 15 minutes.
const versioningCacheTTL = time.Second

// bucketSettings is what every write reads of its bucket: the versioning
// setting and the object lock configuration (locked false: none).
type bucketSettings struct {
	status versioning.Status
	lock   objectlock.Configuration
	locked bool
}

// versioningStatus is the bucket's versioning setting.
func (g *gateway) versioningStatus(ctx context.Context, bucket string) (versioning.Status, error) {
	s, err := g.settings(ctx, bucket)
	return s.status, err
}

// settings are the bucket's versioning and lock settings. A backend
// without a configuration store keeps every bucket unversioned and
// unlocked. A missing bucket is not cached: the next request asks again.
func (g *gateway) settings(ctx context.Context, bucket string) (bucketSettings, error) {
	cs, ok := g.be.(configStore)
	if !ok {
		return bucketSettings{}, nil
	}
	return g.versioning.get(bucket, func() (bucketSettings, error) {
		st, err := readVersioning(ctx, cs, bucket)
		if err != nil {
			return bucketSettings{}, err
		}
		lock, locked, err := readLock(ctx, cs, bucket)
		return bucketSettings{status: st, lock: lock, locked: locked}, err
	})
}

func readVersioning(ctx context.Context, cs configStore, bucket string) (versioning.Status, error) {
	data, err := cs.GetBucketConfig(ctx, bucket, versioning.ConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return versioning.Unversioned, nil
	}
	if err != nil {
		return "", err
	}
	cfg, err := versioning.Parse(data)
	if err != nil {
		return "", err
	}
	return cfg.Status, nil
}

func (g *gateway) putBucketVersioning(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	defer g.versioning.forget(bucket)
	_, err = g.storeBucketConfig(w, r, versioning.ConfigName, func(b []byte) (any, error) {
		cfg, err := versioning.Parse(b)
		if err != nil {
			return nil, versioningErr(err)
		}
		if cfg.Status == versioning.Suspended {
			g.versioning.forget(bucket)
			if _, locked, err := g.lockConfig(r.Context(), bucket); err != nil {
				return nil, err
			} else if locked {
				return nil, apiErrf(errInvalidBucketState, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
			}
		}
		return cfg, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getBucketVersioning(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
		return err
	}
	g.versioning.forget(bucket)
	st, err := g.versioningStatus(r.Context(), bucket)
	if err != nil {
		return err
	}
	return writeXML(w, http.StatusOK, versioningConfiguration{Status: string(st)})
}

// versioningErr is a refused configuration in S3's words.
func versioningErr(err error) error {
	var e *versioning.Error
	if !errors.As(err, &e) {
		return err
	}
	return refusal(e.Code, e.Message)
}

// newVersion is where a write of key goes: the stored key and the version
// ID to answer with, "" in a bucket that was never versioned (no header).
// An enabled bucket writes a new version key; a suspended one writes the
// null version, under the key.
func (g *gateway) newVersion(ctx context.Context, bucket, key string) (stored, id string, err error) {
	st, err := g.versioningStatus(ctx, bucket)
	if err != nil {
		return "", "", err
	}
	switch st {
	case versioning.Enabled:
		id = g.be.NewVersionID()
		return meta.VersionKey(key, id), id, nil
	case versioning.Suspended:
		return key, versioning.NullVersionID, nil
	}
	return key, "", nil
}

// target is the stored object a request on a key addresses.
type target struct {
	stored string
	id     string // the version ID to answer with; "" when unversioned
	// named: the request named the version (?versionId); a delete marker
	// named so is 405, while a latest version that is a marker is 404.
	named  bool
	marker bool // the latest version is a delete marker (only when !named)
}

// setWrittenVersion answers which version a write made. A write of the
// null version (a suspended bucket) answers none, as S3 does.
func setWrittenVersion(h http.Header, id string) {
	if id != versioning.NullVersionID {
		setVersionHeaders(h, id, false)
	}
}

// setVersionHeaders answers which version a request read or wrote.
func setVersionHeaders(h http.Header, id string, marker bool) {
	if id != "" {
		h.Set("X-Amz-Version-Id", id)
	}
	if marker {
		h.Set("X-Amz-Delete-Marker", "true")
	}
}

// resolve returns the stored object a request on key with version
// versionID ("" for none) addresses. Without a version, a bucket that was
// ever versioned reads the newer of the null version and the newest
// version key; a marker there is reported, not read.
func (g *gateway) resolve(ctx context.Context, bucket, key, versionID string) (target, error) {
	switch {
	case versionID == versioning.NullVersionID:
		return target{stored: key, id: versionID, named: true}, nil
	case versionID != "" && !meta.ValidVersionID(versionID):
		// Another store's ID (checkVersionID let it through) names no
		// version here.
		return target{}, apiErr(errNoSuchVersion)
	case versionID != "":
		return target{stored: meta.VersionKey(key, versionID), id: versionID, named: true}, nil
	}
	st, err := g.versioningStatus(ctx, bucket)
	if err != nil || st == versioning.Unversioned {
		return target{stored: key}, err
	}
	latest, ok, err := g.latest(ctx, bucket, key)
	if err != nil {
		return target{}, err
	}
	if !ok {
		return target{}, apiErr(errNoSuchKey)
	}
	t := target{stored: latest.StoredKey, id: versioning.NullVersionID, marker: latest.DeleteMarker}
	if _, id, ok := meta.SplitVersion(latest.StoredKey); ok {
		t.id = id
	}
	return t, nil
}

// current names a versioned key's current version for a conditional
// write, which goes to a new version key: the latest of its stored
// versions, none when that is a delete marker.
func (g *gateway) current(bucket, key string) object.CurrentFunc {
	return versioning.Current(g.be, bucket, key)
}

// latest is key's latest version in a versioned bucket: the newer of its
// null version and its newest version key (ok false: it has neither).
func (g *gateway) latest(ctx context.Context, bucket, key string) (versioning.Stored, bool, error) {
	objs, err := g.storedVersions(ctx, bucket, key, 1)
	if err != nil {
		return versioning.Stored{}, false, err
	}
	var plain, first *versioning.Stored
	for _, o := range objs {
		s := versioning.StoredOf(o)
		if _, _, ok := meta.SplitVersion(o.Key); !ok {
			plain = &s
		} else if first == nil {
			first = &s
		}
	}
	s, ok := versioning.Latest(plain, first)
	return s, ok, nil
}

// readable answers a request that addressed a delete marker: 405 when it
// named the marker's version, 404 when the marker is the latest version;
// both with the marker's headers. nil when t is not a marker.
func (t target) readable(h http.Header, info *object.ObjectInfo) error {
	marker := t.marker || (info != nil && info.DeleteMarker)
	if !marker {
		return nil
	}
	setVersionHeaders(h, t.id, true)
	if info != nil && !info.ModTime.IsZero() {
		h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	}
	if t.named {
		return apiErr(errMethodNotAllowed)
	}
	return apiErr(errNoSuchKey)
}

// notFound turns a missing stored object into the error S3 gives for
// what was asked: NoSuchVersion for a named version.
func (t target) notFound(err error) error {
	if t.named && errors.Is(err, object.ErrObjectNotFound) {
		return apiErr(errNoSuchVersion)
	}
	return err
}

// headVersion resolves key at versionID and reads that version's
// record: a marker is refused as readable says, with its headers in h.
func (g *gateway) headVersion(ctx context.Context, h http.Header, bucket, key, versionID string) (target, object.ObjectInfo, error) {
	t, err := g.resolve(ctx, bucket, key, versionID)
	if err != nil {
		return target{}, object.ObjectInfo{}, err
	}
	if err := t.readable(h, nil); err != nil {
		return target{}, object.ObjectInfo{}, err
	}
	info, err := g.be.HeadObject(ctx, bucket, t.stored)
	if err != nil {
		return target{}, object.ObjectInfo{}, t.notFound(err)
	}
	if err := t.readable(h, &info); err != nil {
		return target{}, object.ObjectInfo{}, err
	}
	return t, info, nil
}

// copySource resolves a copy source's version and reads its record. S3
// refuses a source that names a delete marker as an invalid request.
func (g *gateway) copySource(ctx context.Context, bucket, key, versionID string) (target, object.ObjectInfo, error) {
	t, info, err := g.headVersion(ctx, http.Header{}, bucket, key, versionID)
	if isCode(err, errMethodNotAllowed) {
		err = apiErrf(errInvalidRequest, "The source of a copy request may not specifically refer to a delete marker by version id.")
	}
	return t, info, err
}
