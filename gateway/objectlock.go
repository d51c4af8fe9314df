package gateway

import (
	"context"
	"encoding/xml"
	"errors"
	"maps"
	"net/http"
	"strings"
	"time"

	"tessera/object"
	"tessera/objectlock"
	"tessera/versioning"
)

// Object Lock at the S3 layer: the bucket's configuration is the bucket
// configuration objectlock.ConfigName, written when the bucket is created
// with object lock; a version's retention and legal hold are headers of
// its record (package objectlock), set when it is written or later by
// PutObjectRetention and PutObjectLegalHold, and checked before a version
// is deleted.

type objectLockConfigurationXML struct {
	XMLName           xml.Name         `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ObjectLockConfiguration"`
	ObjectLockEnabled string           `xml:"ObjectLockEnabled,omitempty"`
	Rule              *objectlock.Rule `xml:"Rule,omitempty"`
}

type retentionXML struct {
	XMLName         xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ Retention"`
	Mode            string   `xml:"Mode"`
	RetainUntilDate string   `xml:"RetainUntilDate"`
}

type legalHoldXML struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LegalHold"`
	Status  string   `xml:"Status"`
}

// lockConfig is the bucket's lock configuration; ok is false for a
// bucket created without object lock.
func (g *gateway) lockConfig(ctx context.Context, bucket string) (objectlock.Configuration, bool, error) {
	s, err := g.settings(ctx, bucket)
	return s.lock, s.locked, err
}

func readLock(ctx context.Context, cs configStore, bucket string) (cfg objectlock.Configuration, ok bool, err error) {
	data, err := cs.GetBucketConfig(ctx, bucket, objectlock.ConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return cfg, false, nil
	}
	if err != nil {
		return cfg, false, err
	}
	cfg, err = objectlock.Parse(data)
	return cfg, err == nil, err
}

// lockErr is a refused lock request in S3's words.
func lockErr(err error) error {
	var e *objectlock.Error
	if !errors.As(err, &e) {
		return err
	}
	return refusal(e.Code, e.Message)
}

// errMissingLockConfig answers a retention or legal hold request in a
// bucket without object lock. (S3 words the same refusal of a write's
// lock headers "Bucket is missing ObjectLockConfiguration".)
func errMissingLockConfig() error {
	return apiErrf(errInvalidRequest, "Bucket is missing Object Lock Configuration")
}

// createLockedBucket makes a new bucket's lock configuration and turns
// its versioning on, as CreateBucket with object lock does.
func createLockedBucket(ctx context.Context, cs configStore, bucket string) error {
	if err := cs.PutBucketConfig(ctx, bucket, versioning.ConfigName, []byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)); err != nil {
		return err
	}
	data, err := xml.Marshal(objectlock.Enabled())
	if err != nil {
		return err
	}
	return cs.PutBucketConfig(ctx, bucket, objectlock.ConfigName, data)
}

func (g *gateway) putObjectLockConfig(w http.ResponseWriter, r *http.Request) error {
	bucket, cs, err := g.configTarget(r)
	if err != nil {
		return err
	}
	body, err := g.readBody(w, r)
	if err != nil {
		return err
	}
	if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
		return err
	}
	if len(body) == 0 {
		return apiErr(errMissingRequestBody)
	}
	cfg, err := objectlock.Parse(body)
	if err != nil {
		return lockErr(err)
	}
	// A bucket created without object lock may get it once its versioning
	// is enabled, as S3 allows.
	g.versioning.forget(bucket)
	if s, err := g.settings(r.Context(), bucket); err != nil {
		return err
	} else if !s.locked && s.status != versioning.Enabled {
		return apiErrf(errInvalidBucketState, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
	}
	data, err := xml.Marshal(cfg)
	if err != nil {
		return err
	}
	err = cs.PutBucketConfig(r.Context(), bucket, objectlock.ConfigName, data)
	g.versioning.forget(bucket)
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getObjectLockConfig(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	g.versioning.forget(bucket)
	cfg, ok, err := g.lockConfig(r.Context(), bucket)
	if err != nil {
		return err
	}
	if !ok {
		if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
			return err
		}
		return apiErr(errObjectLockConfigurationNotFound)
	}
	return writeXML(w, http.StatusOK, objectLockConfigurationXML{ObjectLockEnabled: cfg.ObjectLockEnabled, Rule: cfg.Rule})
}

// lockOnWrite sets the lock state of a new version from the write's
// x-amz-object-lock-* headers, or from the bucket's default retention.
// The headers are checked first; a bucket without object lock then
// refuses any of them.
func (g *gateway) lockOnWrite(ctx context.Context, bucket string, h http.Header, opts *object.PutOptions) error {
	st, named, err := lockHeadersState(h, time.Now())
	if err != nil {
		return err
	}
	cfg, ok, err := g.lockConfig(ctx, bucket)
	switch {
	case err != nil:
		return err
	case !ok && named:
		return apiErrf(errInvalidRequest, "Bucket is missing ObjectLockConfiguration")
	case !ok:
		return nil
	}
	if st.Retention.Mode == "" {
		st.Retention, _ = cfg.Default(time.Now())
	}
	if opts.Headers == nil {
		opts.Headers = map[string]string{}
	}
	st.Apply(opts.Headers)
	return nil
}

// lockHeadersState reads a write's x-amz-object-lock-* headers as S3
// checks them; named reports whether any was sent.
func lockHeadersState(h http.Header, now time.Time) (st objectlock.State, named bool, err error) {
	const modeH, untilH, holdH = "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold"
	mode, until, hold := h.Get(modeH), h.Get(untilH), h.Get(holdH)
	bad := func(msg, name, value string) error {
		return withFields(apiErrf(errInvalidArgument, "%s", msg), errorField{"ArgumentName", name}, errorField{"ArgumentValue", value})
	}
	const both = "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied."
	switch {
	case mode != "" && until == "":
		return st, true, bad(both, untilH, "")
	case mode == "" && until != "":
		return st, true, bad(both, modeH, "")
	case mode != "":
		t, perr := time.Parse(time.RFC3339, until)
		switch {
		case perr != nil:
			return st, true, bad("The retain until date must be provided in ISO 8601 format", untilH, until)
		case objectlock.Mode(mode) != objectlock.Governance && objectlock.Mode(mode) != objectlock.Compliance:
			return st, true, bad("Unknown wormMode directive.", modeH, mode)
		case !t.After(now):
			return st, true, bad("The retain until date must be in the future!", untilH, until)
		}
		st.Retention = objectlock.Retention{Mode: objectlock.Mode(mode), Until: t.UTC()}
	}
	switch hold {
	case "":
	case "OFF":
		st.HoldSet = true
	case "ON":
		st.LegalHold, st.HoldSet = true, true
	default:
		return st, true, bad("Legal Hold must be either of 'ON' or 'OFF'", holdH, hold)
	}
	return st, mode != "" || hold != "", nil
}

// lockBody reads a retention or legal hold body once the bucket is known
// to exist: S3 names a missing bucket first, then a bad body, then a
// missing key.
func (g *gateway) lockBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	bucket, _, err := objectParams(r)
	if err != nil {
		return nil, err
	}
	if _, err := g.versioningStatus(r.Context(), bucket); err != nil {
		return nil, err
	}
	return g.readBody(w, r)
}

// bypassGovernance reports x-amz-bypass-governance-retention: true.
func bypassGovernance(h http.Header) bool {
	return strings.EqualFold(h.Get("X-Amz-Bypass-Governance-Retention"), "true")
}

// lockedVersion is the version a retention or legal hold request
// addresses, in a bucket with object lock.
func (g *gateway) lockedVersion(w http.ResponseWriter, r *http.Request) (string, target, object.ObjectInfo, error) {
	bucket, key, err := objectParams(r)
	if err != nil {
		return "", target{}, object.ObjectInfo{}, err
	}
	t, info, err := g.taggedVersion(w, r, bucket, key)
	if err != nil {
		return "", target{}, object.ObjectInfo{}, err
	}
	if _, ok, err := g.lockConfig(r.Context(), bucket); err != nil {
		return "", target{}, object.ObjectInfo{}, err
	} else if !ok {
		return "", target{}, object.ObjectInfo{}, errMissingLockConfig()
	}
	setVersionHeaders(w.Header(), t.id, false)
	return bucket, t, info, nil
}

func (g *gateway) putObjectRetention(w http.ResponseWriter, r *http.Request) error {
	body, err := g.lockBody(w, r)
	if err != nil {
		return err
	}
	next, err := objectlock.ParseRetention(body)
	if err != nil {
		return lockErr(err)
	}
	now := time.Now()
	if next.Mode != "" && !next.Until.After(now) {
		return apiErrf(errInvalidArgument, "The retain until date must be in the future!")
	}
	bucket, t, _, err := g.lockedVersion(w, r)
	if err != nil {
		return err
	}
	bypass := bypassGovernance(r.Header)
	return g.rewriteLock(w, r, bucket, t, func(st *objectlock.State) error {
		if err := objectlock.CheckRetention(st.Retention, next, now, bypass); err != nil {
			return lockErr(err)
		}
		st.Retention = next
		return nil
	})
}

// rewriteLock changes the version's lock state in its record as change
// says. change judges the state of the record the rewrite replaces, so a
// retention or hold set since the request read the version is seen, and
// kept.
func (g *gateway) rewriteLock(w http.ResponseWriter, r *http.Request, bucket string, t target, change func(*objectlock.State) error) error {
	err := g.rewriteRecord(r.Context(), bucket, t, func(headers map[string]string) error {
		st := objectlock.StateOf(headers)
		if err := change(&st); err != nil {
			return err
		}
		st.Apply(headers)
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getObjectRetention(w http.ResponseWriter, r *http.Request) error {
	_, _, info, err := g.lockedVersion(w, r)
	if err != nil {
		return err
	}
	st := objectlock.StateOf(info.Headers)
	if st.Retention.Mode == "" {
		return apiErr(errNoSuchObjectLockConfiguration)
	}
	return writeXML(w, http.StatusOK, retentionXML{Mode: string(st.Retention.Mode),
		RetainUntilDate: st.Retention.Until.UTC().Format(time.RFC3339)})
}

func (g *gateway) putObjectLegalHold(w http.ResponseWriter, r *http.Request) error {
	body, err := g.lockBody(w, r)
	if err != nil {
		return err
	}
	on, err := objectlock.ParseLegalHold(body)
	if err != nil {
		return lockErr(err)
	}
	bucket, t, _, err := g.lockedVersion(w, r)
	if err != nil {
		return err
	}
	return g.rewriteLock(w, r, bucket, t, func(st *objectlock.State) error {
		st.LegalHold, st.HoldSet = on, true
		return nil
	})
}

func (g *gateway) getObjectLegalHold(w http.ResponseWriter, r *http.Request) error {
	_, _, info, err := g.lockedVersion(w, r)
	if err != nil {
		return err
	}
	st := objectlock.StateOf(info.Headers)
	if !st.HoldSet {
		return apiErr(errNoSuchObjectLockConfiguration)
	}
	status := "OFF"
	if st.LegalHold {
		status = "ON"
	}
	return writeXML(w, http.StatusOK, legalHoldXML{Status: status})
}

// withoutLock is a copy of a record's headers without its lock state.
func withoutLock(headers map[string]string) map[string]string {
	out := maps.Clone(headers)
	objectlock.State{}.Apply(out)
	return out
}
