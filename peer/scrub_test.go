package peer

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"tessera/scrub"
)

type fakeScrubber struct {
	starts int
	limit  int
}

func (f *fakeScrubber) Start() time.Time { f.starts++; return time.Unix(200, 0).UTC() }

func (f *fakeScrubber) Report(limit int) scrub.Report {
	f.limit = limit
	return scrub.Report{Pending: 1, Findings: []scrub.Finding{{Bucket: "b", Key: "k/../x", Stamp: stamp(5, "w"), Shard: 3}}}
}

func TestScrubRoutes(t *testing.T) {
	f := &fakeScrubber{}
	p := newPeerWith(t, ServerConfig{Scrub: f})
	at, err := p.client.StartScrub(ctx)
	if err != nil || !at.Equal(time.Unix(200, 0)) || f.starts != 1 {
		t.Fatalf("start: %v at %v, %d starts", err, at, f.starts)
	}
	for _, tc := range []struct{ ask, want int }{{10, 10}, {0, 0}, {1 << 20, scrubReportLimit}} {
		r, err := p.client.ScrubReport(ctx, tc.ask)
		if err != nil || r.Pending != 1 || len(r.Findings) != 1 || r.Findings[0].Key != "k/../x" || r.Findings[0].Shard != 3 {
			t.Fatalf("report: %v %+v", err, r)
		}
		if f.limit != tc.want {
			t.Errorf("asked for %d findings, the scrubber was asked for %d, want %d", tc.ask, f.limit, tc.want)
		}
	}
	// A peer without a scrubber has no such route.
	_, err = newPeer(t, nil).client.ScrubReport(ctx, 10)
	var re *RemoteError
	if !errors.As(err, &re) || (re.Status != http.StatusNotFound && re.Status != http.StatusMethodNotAllowed) {
		t.Fatalf("no scrubber: %v", err)
	}
}
