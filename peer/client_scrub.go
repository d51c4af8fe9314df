package peer

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"tessera/scrub"
)

// ScrubReport returns the peer's scrub status with up to limit findings.
func (c *Client) ScrubReport(ctx context.Context, limit int) (scrub.Report, error) {
	var r scrub.Report
	err := c.getJSON(ctx, http.MethodGet, pathScrub, url.Values{"limit": {strconv.Itoa(limit)}}, nil, &r)
	return r, err
}

// StartScrub asks the peer to start a scrub pass now and returns the
// peer's time of the request.
func (c *Client) StartScrub(ctx context.Context) (time.Time, error) {
	var a scrubStart
	err := c.getJSON(ctx, http.MethodPost, pathScrub, nil, nil, &a)
	return a.Accepted, err
}
