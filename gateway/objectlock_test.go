package gateway

import (
	"net/http"
	"testing"
	"time"
)

func lockHeadersFor(mode string, until time.Time) map[string]string {
	return map[string]string{"X-Amz-Object-Lock-Mode": mode, "X-Amz-Object-Lock-Retain-Until-Date": until.UTC().Format(time.RFC3339)}
}

func retentionBody(mode string, until time.Time) string {
	return `<Retention><Mode>` + mode + `</Mode><RetainUntilDate>` + until.UTC().Format(time.RFC3339) + `</RetainUntilDate></Retention>`
}

// TestObjectLock: a bucket created with object lock is versioned for good
// and gives new versions its default retention; a version under
// governance is deleted only with the bypass header, one under compliance
// or a legal hold by nobody; a compliance retention only grows.
func TestObjectLock(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt", header: map[string]string{"X-Amz-Bucket-Object-Lock-Enabled": "true"}})
	var v versioningConfiguration
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?versioning"}), &v)
	if v.Status != "Enabled" {
		t.Fatalf("a locked bucket's versioning: %q", v.Status)
	}
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?versioning",
		body: `<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>`}), http.StatusConflict, "InvalidBucketState")
	var cfg objectLockConfigurationXML
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?object-lock"}), &cfg)
	if cfg.ObjectLockEnabled != "Enabled" || cfg.Rule != nil {
		t.Fatalf("configuration %+v", cfg)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?object-lock",
		body: `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`})

	gov := putVersion(t, h, "gov", "data")
	rec := mustDo(t, h, req{method: http.MethodHead, target: "/bkt/gov?versionId=" + gov})
	until, err := time.Parse(time.RFC3339, rec.Header().Get("X-Amz-Object-Lock-Retain-Until-Date"))
	if rec.Header().Get("X-Amz-Object-Lock-Mode") != "GOVERNANCE" || err != nil || time.Until(until) < 23*time.Hour {
		t.Fatalf("default retention: %v", rec.Header())
	}
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/gov?versionId=" + gov}), http.StatusForbidden, "AccessDenied")
	// A delete without a version only adds a marker.
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/gov"}), http.StatusNoContent, "")
	mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/gov?versionId=" + gov, header: map[string]string{"X-Amz-Bypass-Governance-Retention": "true"}})
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/gov?versionId=" + gov}), http.StatusNotFound, "NoSuchVersion")

	soon := time.Now().Add(time.Hour).Truncate(time.Second)
	comp := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/comp", body: "x", header: lockHeadersFor("COMPLIANCE", soon)}).Header().Get("X-Amz-Version-Id")
	bypass := map[string]string{"X-Amz-Bypass-Governance-Retention": "true"}
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/comp?versionId=" + comp, header: bypass}), http.StatusForbidden, "AccessDenied")
	var res deleteResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete", header: bypass,
		body: `<Delete><Object><Key>comp</Key><VersionId>` + comp + `</VersionId></Object></Delete>`}), &res)
	if len(res.Errors) != 1 || res.Errors[0].Code != "AccessDenied" || res.Errors[0].VersionID != comp {
		t.Fatalf("DeleteObjects of a compliance version: %+v", res)
	}
	for _, shorter := range []string{retentionBody("COMPLIANCE", soon.Add(-time.Minute)), retentionBody("GOVERNANCE", soon), `<Retention></Retention>`} {
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/comp?retention&versionId=" + comp, body: shorter, header: bypass}), http.StatusForbidden, "AccessDenied")
	}
	later := soon.Add(24 * time.Hour)
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/comp?retention&versionId=" + comp, body: retentionBody("COMPLIANCE", later)})
	var ret retentionXML
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/comp?retention&versionId=" + comp}), &ret)
	if ret.Mode != "COMPLIANCE" || ret.RetainUntilDate != later.UTC().Format(time.RFC3339) {
		t.Fatalf("retention after extending: %+v", ret)
	}
	if st, body, _ := getVersion(h, "comp", comp); st != http.StatusOK || body != "x" {
		t.Fatalf("locked version reads %d %q", st, body)
	}
	// A copy takes the lock of its request or its bucket, never the
	// source's: a copy into an unlocked bucket deletes freely.
	mustDo(t, h, req{method: http.MethodPut, target: "/plain"})
	mustDo(t, h, req{method: http.MethodPut, target: "/plain/c", header: map[string]string{"X-Amz-Copy-Source": "bkt/comp?versionId=" + comp}})
	if got := mustDo(t, h, req{method: http.MethodHead, target: "/plain/c"}).Header().Get("X-Amz-Object-Lock-Mode"); got != "" {
		t.Fatalf("a copy into an unlocked bucket carries lock mode %q", got)
	}
	mustDo(t, h, req{method: http.MethodDelete, target: "/plain/c"})
	hdr := lockHeadersFor("COMPLIANCE", soon)
	hdr["X-Amz-Copy-Source"] = "bkt/comp?versionId=" + comp
	expect(t, do(h, req{method: http.MethodPut, target: "/plain/c2", header: hdr}), http.StatusBadRequest, "InvalidRequest")
	c2 := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/c2", header: hdr}).Header().Get("X-Amz-Version-Id")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/c2?versionId=" + c2, header: bypass}), http.StatusForbidden, "AccessDenied")

	held := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/held", body: "y", header: map[string]string{"X-Amz-Object-Lock-Legal-Hold": "ON"}}).Header().Get("X-Amz-Version-Id")
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/held?retention&versionId=" + held, body: `<Retention></Retention>`, header: bypass})
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/held?versionId=" + held, header: bypass}), http.StatusForbidden, "AccessDenied")
	var hold legalHoldXML
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/held?legal-hold&versionId=" + held}), &hold)
	if hold.Status != "ON" {
		t.Fatalf("legal hold %+v", hold)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/held?legal-hold&versionId=" + held, body: `<LegalHold><Status>OFF</Status></LegalHold>`})
	mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/held?versionId=" + held})
}

// A bucket created without object lock refuses every lock request.
func TestObjectLockNeedsALockedBucket(t *testing.T) {
	h := newVersioningGateway(t)
	setVersioning(t, h, "Enabled")
	id := putVersion(t, h, "k", "v")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?object-lock"}), http.StatusNotFound, "ObjectLockConfigurationNotFoundError")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k2", body: "x", header: lockHeadersFor("GOVERNANCE", time.Now().Add(time.Hour))}),
		http.StatusBadRequest, "InvalidRequest")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k?retention&versionId=" + id, body: retentionBody("GOVERNANCE", time.Now().Add(time.Hour))}),
		http.StatusBadRequest, "InvalidRequest")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?legal-hold"}), http.StatusBadRequest, "InvalidRequest")
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt?object-lock"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/nokey?legal-hold"}), http.StatusNotFound, "NoSuchKey")
}

// Object lock comes to a bucket created without it once its versioning
// is enabled, as S3 allows; never to an unversioned bucket.
func TestObjectLockOnAnExistingBucket(t *testing.T) {
	h := newVersioningGateway(t)
	lock := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?object-lock", body: lock}), http.StatusConflict, "InvalidBucketState")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?object-lock"}), http.StatusBadRequest, "MissingRequestBodyError")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?object-lock", body: "<x"}), http.StatusBadRequest, "MalformedXML")
	setVersioning(t, h, "Enabled")
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?object-lock", body: lock})
	id := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k", body: "x", header: map[string]string{"X-Amz-Object-Lock-Legal-Hold": "ON"}}).Header().Get("X-Amz-Version-Id")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/k?versionId=" + id}), http.StatusForbidden, "AccessDenied")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?versioning",
		body: `<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>`}), http.StatusConflict, "InvalidBucketState")
}
