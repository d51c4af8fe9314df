package peer

import (
	"net/http"
	"time"

	"tessera/scrub"
)

// pathScrub serves the peer's scrubber: GET reports its status and
// findings, POST starts a pass now.
const pathScrub = "/v1/scrub"

// scrubReportLimit is how many findings one report carries at most.
const scrubReportLimit = 1000

// Scrubber is the peer's background scrubber (scrub.Scrubber).
type Scrubber interface {
	Start() time.Time
	Report(limit int) scrub.Report
}

// scrubStart is the answer to POST /v1/scrub.
type scrubStart struct {
	// Accepted is the peer's time of the request; the pass it starts
	// begins at or after it.
	Accepted time.Time `json:"accepted"`
}

func (s *server) scrubReport(w http.ResponseWriter, r *http.Request, q *query) error {
	limit := q.int("limit", scrubReportLimit)
	if q.err != nil {
		return q.err
	}
	writeJSON(w, http.StatusOK, s.scrub.Report(int(min(max(limit, 0), scrubReportLimit))))
	return nil
}

func (s *server) scrubStart(w http.ResponseWriter, _ *http.Request, _ *query) error {
	writeJSON(w, http.StatusOK, scrubStart{Accepted: s.scrub.Start()})
	return nil
}
