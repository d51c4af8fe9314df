package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
	"tessera/sched"
	"tessera/scrub"
)

type fakeAdmin struct{ policy string }

func (a *fakeAdmin) SchedStatus() sched.Status { return sched.Status{Policy: a.policy, Slots: 20} }

func (a *fakeAdmin) SetSchedPolicy(name string) error {
	for _, p := range sched.Policies() {
		if p == name {
			a.policy = name
			return nil
		}
	}
	return fmt.Errorf("%w %q", sched.ErrUnknownPolicy, name)
}

func newAdminGateway(t *testing.T, auth Authenticator, admin Admin) http.Handler {
	t.Helper()
	h, err := New(Config{Backend: newFakeBackend(), Auth: auth, Logger: zerolog.Nop(), Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestAdminSched(t *testing.T) {
	admin := &fakeAdmin{policy: "eta"}
	h := newAdminGateway(t, allowAll{}, admin)
	rec := do(h, req{method: http.MethodGet, target: AdminPrefix + "sched"})
	var got schedReply
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.Policy != "eta" || got.Status.Slots != 20 {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	rec = do(h, req{method: http.MethodPut, target: AdminPrefix + "sched?policy=load"})
	if rec.Code != http.StatusOK || admin.policy != "load" {
		t.Fatalf("PUT load: %d %s, policy %s", rec.Code, rec.Body, admin.policy)
	}
	expect(t, do(h, req{method: http.MethodPut, target: AdminPrefix + "sched?policy=bogus"}), http.StatusBadRequest, "InvalidArgument")
	expect(t, do(h, req{method: http.MethodGet, target: AdminPrefix + "other"}), http.StatusNotImplemented, "NotImplemented")
	if admin.policy != "load" {
		t.Fatalf("policy changed by a bad request: %s", admin.policy)
	}
}

func TestAdminNeedsAuth(t *testing.T) {
	admin := &fakeAdmin{policy: "eta"}
	h := newAdminGateway(t, denyWith{sigv4.ErrSignatureDoesNotMatch}, admin)
	rec := do(h, req{method: http.MethodPut, target: AdminPrefix + "sched?policy=load"})
	if rec.Code != http.StatusForbidden || admin.policy != "eta" {
		t.Fatalf("unauthenticated PUT: %d, policy %s", rec.Code, admin.policy)
	}
}

func TestAdminWithoutControl(t *testing.T) {
	h := newAdminGateway(t, allowAll{}, nil)
	expect(t, do(h, req{method: http.MethodGet, target: AdminPrefix + "sched"}), http.StatusNotImplemented, "NotImplemented")
}

type fakeScrubAdmin struct {
	fakeAdmin
	started int
}

func (a *fakeScrubAdmin) StartScrub(context.Context) ScrubReply {
	a.started++
	at := time.Unix(100, 0)
	return ScrubReply{Peers: []ScrubPeer{{Peer: "p1", Accepted: &at}, {Peer: "p2", Error: "down"}}}
}

func (a *fakeScrubAdmin) ScrubStatus(context.Context) ScrubReply {
	return ScrubReply{Peers: []ScrubPeer{{Peer: "p1", Report: &scrub.Report{Pending: 3}}}, RepairPending: 2}
}

// POST .../scrub reaches the admin (it is no S3 operation, so the S3
// method checks must let it through); GET reports.
func TestAdminScrub(t *testing.T) {
	admin := &fakeScrubAdmin{}
	h := newAdminGateway(t, allowAll{}, admin)
	rec := do(h, req{method: http.MethodPost, target: AdminPrefix + "scrub"})
	var got ScrubReply
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil || admin.started != 1 ||
		len(got.Peers) != 2 || got.Peers[0].Accepted == nil || got.Peers[1].Error != "down" {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	rec = do(h, req{method: http.MethodGet, target: AdminPrefix + "scrub"})
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.RepairPending != 2 ||
		got.Peers[0].Report == nil || got.Peers[0].Report.Pending != 3 {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	// An admin without scrub control answers NotImplemented.
	h = newAdminGateway(t, allowAll{}, &fakeAdmin{policy: "eta"})
	expect(t, do(h, req{method: http.MethodPost, target: AdminPrefix + "scrub"}), http.StatusNotImplemented, "NotImplemented")
}
