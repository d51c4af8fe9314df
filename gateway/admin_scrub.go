package gateway

import (
	"context"
	"net/http"
	"time"

	"tessera/scrub"
)

// ScrubAdmin is the scrub control an Admin may also offer: POST
// .../scrub starts a pass on every alive peer now, GET .../scrub asks
// every peer for its status.
type ScrubAdmin interface {
	StartScrub(ctx context.Context) ScrubReply
	ScrubStatus(ctx context.Context) ScrubReply
}

// ScrubReply is the body of GET and POST .../scrub.
type ScrubReply struct {
	Peers []ScrubPeer `json:"peers"`
	// RepairPending is the gateway's repair queue length: findings are
	// repaired through it.
	RepairPending int `json:"repair_pending"`
}

// ScrubPeer is one peer's answer.
type ScrubPeer struct {
	Peer string `json:"peer"`
	// Accepted (POST) is the peer's time of the request: the pass it
	// started has report.last.started at or after it once it finished.
	Accepted *time.Time    `json:"accepted,omitempty"`
	Error    string        `json:"error,omitempty"`
	Report   *scrub.Report `json:"report,omitempty"`
}

func (g *gateway) scrubAdmin() (ScrubAdmin, error) {
	if sa, ok := g.admin.(ScrubAdmin); ok {
		return sa, nil
	}
	return nil, apiErr(errNotImplemented)
}

func (g *gateway) getScrub(w http.ResponseWriter, r *http.Request) error {
	sa, err := g.scrubAdmin()
	if err != nil {
		return err
	}
	return writeAdminJSON(w, sa.ScrubStatus(r.Context()))
}

func (g *gateway) postScrub(w http.ResponseWriter, r *http.Request) error {
	sa, err := g.scrubAdmin()
	if err != nil {
		return err
	}
	return writeAdminJSON(w, sa.StartScrub(r.Context()))
}
