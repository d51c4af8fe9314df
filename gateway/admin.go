package gateway

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"tessera/sched"
)

// AdminPrefix is the path of the admin API. No bucket name starts with a
// dot, so it cannot shadow a bucket. Requests are authenticated with
// SigV4 like every other request.
const AdminPrefix = "/.tessera/admin/v1/"

// Admin is the runtime control the admin API drives.
type Admin interface {
	SchedStatus() sched.Status
	SetSchedPolicy(name string) error
}

// schedReply is the body of GET and PUT .../sched.
type schedReply struct {
	Policy   string        `json:"policy"`
	Policies []string      `json:"policies"`
	Status   *sched.Status `json:"status,omitempty"`
}

// adminRoutes registers the admin API ahead of the bucket routes.
func (g *gateway) adminRoutes(m *mux.Router) {
	m.Path(AdminPrefix + "sched").Methods(http.MethodGet).Handler(adapt(g.getSched))
	m.Path(AdminPrefix + "sched").Methods(http.MethodPut).Handler(adapt(g.putSched))
	m.Path(AdminPrefix + "scrub").Methods(http.MethodGet).Handler(adapt(g.getScrub))
	m.Path(AdminPrefix + "scrub").Methods(http.MethodPost).Handler(adapt(g.postScrub))
	m.Path(AdminPrefix + "status").Methods(http.MethodGet).Handler(adapt(g.getStatus))
	m.Path(AdminPrefix + "layout").Methods(http.MethodGet).Handler(adapt(g.getLayout))
	m.Path(AdminPrefix + "layout").Methods(http.MethodPut).Handler(adapt(g.putLayout))
	m.Path(AdminPrefix + "layout/apply").Methods(http.MethodPost).Handler(adapt(g.postLayoutApply))
	m.Path(AdminPrefix + "decommission").Methods(http.MethodPost).Handler(adapt(g.postDecommission))
	m.Path(AdminPrefix + "heal").Methods(http.MethodPost).Handler(adapt(g.postHeal))
	m.Path(AdminPrefix + "heal").Methods(http.MethodGet).Handler(adapt(g.getHeal))
	m.Path(AdminPrefix + "bucket").Methods(http.MethodGet).Handler(adapt(g.getBucketReport))
	m.PathPrefix(AdminPrefix).Handler(adapt(notImplemented))
}

// getSched returns the scheduler's status.
func (g *gateway) getSched(w http.ResponseWriter, r *http.Request) error {
	if g.admin == nil {
		return apiErr(errNotImplemented)
	}
	st := g.admin.SchedStatus()
	return writeAdminJSON(w, schedReply{Policy: st.Policy, Policies: sched.Policies(), Status: &st})
}

// putSched switches the policy: PUT .../sched?policy=NAME.
func (g *gateway) putSched(w http.ResponseWriter, r *http.Request) error {
	if g.admin == nil {
		return apiErr(errNotImplemented)
	}
	name := r.URL.Query().Get("policy")
	if err := g.admin.SetSchedPolicy(name); err != nil {
		if errors.Is(err, sched.ErrUnknownPolicy) {
			return apiErrf(errInvalidArgument, "unknown policy %q; have %v", name, sched.Policies())
		}
		return err
	}
	return writeAdminJSON(w, schedReply{Policy: g.admin.SchedStatus().Policy, Policies: sched.Policies()})
}

func writeAdminJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
