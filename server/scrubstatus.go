package server

import (
	"time"

	"tessera/scrub"
	"tessera/web"
)

// fillScrub puts the peers' last scrub reports on the status page.
func (g *Gateway) fillScrub(st *web.Status) {
	st.Scrub.Peers = []web.ScrubPeer{}
	for _, p := range g.scrubPeers() {
		sp := web.ScrubPeer{ID: p.Peer, Error: p.Error}
		if r := p.Report; r != nil {
			scrubFigures(&sp, r)
		}
		st.Scrub.ObjectsChecked += sp.ObjectsChecked
		st.Scrub.ShardsChecked += sp.ShardsChecked
		st.Scrub.CorruptFound += sp.CorruptFound
		st.Scrub.Repaired += sp.Repaired
		st.Scrub.Pending += sp.Pending
		st.Scrub.Peers = append(st.Scrub.Peers, sp)
	}
}

func scrubFigures(sp *web.ScrubPeer, r *scrub.Report) {
	t := r.Totals
	sp.ObjectsChecked, sp.ShardsChecked, sp.BytesChecked = t.ObjectsChecked, t.ShardsChecked, t.BytesChecked
	sp.CorruptFound, sp.Repaired, sp.Pending = t.CorruptFound, t.Repaired, int64(r.Pending)
	sp.BytesPerSec, sp.Interval = r.BytesPerSec, r.Interval
	if p := r.Pass; p != nil {
		sp.Running, sp.Manual, sp.PassStarted = true, p.Manual, timePtr(p.Started)
		sp.PassObjects, sp.PassChecked = p.Objects, p.ObjectsChecked
	} else if r.Last != nil {
		sp.Manual, sp.PassStarted = r.Last.Manual, timePtr(r.Last.Started)
		sp.PassObjects, sp.PassChecked = r.Last.Objects, r.Last.ObjectsChecked
	}
	if r.Last != nil {
		sp.LastFinished = timePtr(r.Last.Finished)
	}
	if !r.NextPass.IsZero() {
		sp.NextPass = timePtr(r.NextPass)
	}
}

func timePtr(t time.Time) *time.Time { return &t }
