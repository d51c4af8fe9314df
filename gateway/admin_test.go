package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
	"tessera/sched"
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
