package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// HealAdmin is the repair control an Admin may also offer: POST
// .../heal?bucket=B&prefix=P starts repairing every object under a prefix
// now, GET .../heal?id=N reports how far that got.
type HealAdmin interface {
	// StartHeal checks that the bucket exists and starts the job; it
	// does not wait for it.
	StartHeal(ctx context.Context, req HealRequest) (HealStatus, error)
	// HealStatus reports job id; ErrAdminRequest for an unknown one.
	HealStatus(id string) (HealStatus, error)
}

// HealRequest names what to repair.
type HealRequest struct {
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix"`
	// Quick checks the peers' records only, as the background scanner
	// does; otherwise every shard's bytes are read and verified too, so a
	// shard file lost or rotted under an intact record is rebuilt.
	Quick bool `json:"quick"`
}

// HealStatus is one heal job's progress; the body of both calls.
type HealStatus struct {
	ID string `json:"id"`
	HealRequest
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished"` // nil while running
	// Objects examined so far: Healthy needed nothing, Repaired had
	// Shards shards rewritten, Failed could not be repaired now (Errors
	// lists the first few).
	Objects  int64    `json:"objects"`
	Healthy  int64    `json:"healthy"`
	Repaired int64    `json:"repaired"`
	Shards   int64    `json:"shards"`
	Failed   int64    `json:"failed"`
	Errors   []string `json:"errors"`
	// Error is why the job stopped early (a listing failed).
	Error string `json:"error,omitempty"`
}

func (g *gateway) healAdmin() (HealAdmin, error) {
	if ha, ok := g.admin.(HealAdmin); ok {
		return ha, nil
	}
	return nil, apiErr(errNotImplemented)
}

func (g *gateway) postHeal(w http.ResponseWriter, r *http.Request) error {
	ha, err := g.healAdmin()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	req := HealRequest{Bucket: q.Get("bucket"), Prefix: q.Get("prefix")}
	if req.Bucket == "" {
		return apiErrf(errInvalidArgument, "heal: the bucket parameter is required")
	}
	if v := q.Get("quick"); v != "" {
		if req.Quick, err = strconv.ParseBool(v); err != nil {
			return apiErrf(errInvalidArgument, "heal: quick=%q: want true or false", v)
		}
	}
	st, err := ha.StartHeal(r.Context(), req)
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, st)
}

func (g *gateway) getHeal(w http.ResponseWriter, r *http.Request) error {
	ha, err := g.healAdmin()
	if err != nil {
		return err
	}
	st, err := ha.HealStatus(r.URL.Query().Get("id"))
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, st)
}
