package server

import (
	"context"
	"sort"
	"sync"
	"time"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/meta"
	"tessera/object"
	"tessera/scrub"
)

// Deep scrub: peers verify their own shards (package scrub says why);
// gateways poll every peer's report, show it, and the lead gateway feeds
// the findings into its repair queue, the path every degraded object
// takes. A finding stays on its peer until the copy verifies, so a
// finding a gateway missed (restart, lead change) is reported again.

// DefaultScrubPoll is how often a gateway polls the peers' scrub reports.
const DefaultScrubPoll = 10 * time.Second

// scrubCallTimeout bounds one peer's answer.
const scrubCallTimeout = 5 * time.Second

// scrubWatch keeps the latest scrub report of every peer.
type scrubWatch struct {
	mu    sync.Mutex
	peers map[string]gateway.ScrubPeer
}

// watchScrub polls the peers every GatewayConfig.ScrubPoll until ctx ends.
func (g *Gateway) watchScrub(ctx context.Context) {
	every := g.cfg.ScrubPoll
	if every <= 0 {
		every = DefaultScrubPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.pollScrub(ctx)
		}
	}
}

// pollScrub asks every alive peer for its report, keeps the answers and,
// on the lead gateway, queues the findings for repair.
func (g *Gateway) pollScrub(ctx context.Context) gateway.ScrubReply {
	lead := g.leadGateway()
	out := g.eachPeer(ctx, func(ctx context.Context, p *gateway.ScrubPeer) error {
		c, err := g.view.peer(meta.PeerID(p.Peer))
		if err != nil {
			return err
		}
		r, err := c.ScrubReport(ctx, 1000)
		if err != nil {
			return err
		}
		p.Report = &r
		if lead {
			for _, f := range r.Findings {
				g.repair.Enqueue(scrubItem(p.Peer, f))
			}
		}
		return nil
	})
	g.scrub.mu.Lock()
	if g.scrub.peers == nil {
		g.scrub.peers = map[string]gateway.ScrubPeer{}
	}
	for _, p := range out.Peers {
		if p.Report == nil {
			if old, ok := g.scrub.peers[p.Peer]; ok {
				p.Report = old.Report // keep the last known figures
			}
		}
		g.scrub.peers[p.Peer] = p
	}
	g.scrub.mu.Unlock()
	return out
}

// scrubItem is the repair of one finding: the damaged shard is Suspect,
// so RepairObject verifies it and rebuilds it from the others; a damaged
// record (Shard -1) is found by the survey itself.
func scrubItem(peer string, f scrub.Finding) object.RepairItem {
	it := object.RepairItem{Bucket: f.Bucket, Key: f.Key, Stamp: f.Stamp, Reason: "scrub on " + peer + ": " + f.Error}
	if f.Shard >= 0 {
		it.Shards = []int{f.Shard}
	}
	return it
}

// StartScrub asks every alive peer to start a scrub pass now.
func (g *Gateway) StartScrub(ctx context.Context) gateway.ScrubReply {
	return g.eachPeer(ctx, func(ctx context.Context, p *gateway.ScrubPeer) error {
		c, err := g.view.peer(meta.PeerID(p.Peer))
		if err != nil {
			return err
		}
		at, err := c.StartScrub(ctx)
		if err == nil {
			p.Accepted = &at
		}
		return err
	})
}

// ScrubStatus polls every alive peer now.
func (g *Gateway) ScrubStatus(ctx context.Context) gateway.ScrubReply { return g.pollScrub(ctx) }

// eachPeer runs fn for every alive peer at once, sorted by ID.
func (g *Gateway) eachPeer(ctx context.Context, fn func(context.Context, *gateway.ScrubPeer) error) gateway.ScrubReply {
	var peers []gateway.ScrubPeer
	for _, m := range g.node.Peers() {
		if m.State == cluster.StateAlive {
			peers = append(peers, gateway.ScrubPeer{Peer: m.ID})
		}
	}
	var wg sync.WaitGroup
	for i := range peers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, scrubCallTimeout)
			defer cancel()
			if err := fn(ctx, &peers[i]); err != nil {
				peers[i].Error = err.Error()
			}
		})
	}
	wg.Wait()
	sort.Slice(peers, func(i, j int) bool { return peers[i].Peer < peers[j].Peer })
	return gateway.ScrubReply{Peers: peers, RepairPending: g.repair.Pending()}
}

// scrubPeers is the last report of every peer polled, sorted by ID.
func (g *Gateway) scrubPeers() []gateway.ScrubPeer {
	g.scrub.mu.Lock()
	defer g.scrub.mu.Unlock()
	out := make([]gateway.ScrubPeer, 0, len(g.scrub.peers))
	for _, p := range g.scrub.peers {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}
