package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"tessera/cluster"
	"tessera/cluster/ring"
	"tessera/gateway"
	"tessera/meta"
)

// layoutCallTimeout bounds a layout change: the mint, a proposer
// interval to see it win, and a retry or two.
const layoutCallTimeout = 20 * time.Second

// drainTimeout bounds the peer's answer to a decommission.
const drainTimeout = 30 * time.Second

// Layout reports the ring: each peer's vnodes, share s, weight w and
// P = s/w, and the pending change.
func (g *Gateway) Layout(ctx context.Context) gateway.LayoutReply {
	cur, older := g.node.Epoch()
	rep := gateway.LayoutReply{Epoch: cur.Number, Mode: layoutMode(cur), RingWidth: g.node.RingWidth(),
		Moving: g.dataMoving(cur.Number), OlderLayouts: len(older), Settled: g.node.Settled(),
		Peers: g.layoutPeers(g.node.View().Ring())}
	if next, ok := g.node.PendingLayout(); ok {
		rep.Pending = pendingChange(cur, next)
	}
	return rep
}

func (g *Gateway) layoutPeers(r *ring.Ring) []gateway.LayoutPeer {
	var total float64
	for _, p := range r.Peers() {
		if p.Vnodes > 0 {
			total += p.Weight
		}
	}
	out := []gateway.LayoutPeer{}
	for _, p := range r.Peers() {
		lp := gateway.LayoutPeer{ID: string(p.ID), Zone: p.Zone, Capacity: p.Weight, Vnodes: p.Vnodes, Share: r.Share(p.ID)}
		if m, ok := g.node.Member(string(p.ID)); ok {
			lp.State = m.State.String()
		}
		if p.Vnodes > 0 && total > 0 {
			lp.Weight = p.Weight / total
			pv := lp.Share / lp.Weight
			lp.P = &pv
		}
		out = append(out, lp)
	}
	return out
}

func pendingChange(cur, next cluster.Epoch) *gateway.LayoutChange {
	weight := func(p *cluster.EpochPeer) *gateway.LayoutWeight {
		if p == nil {
			return nil
		}
		return &gateway.LayoutWeight{Capacity: p.Weight, Vnodes: p.Vnodes, Zone: p.Zone}
	}
	lc := &gateway.LayoutChange{Epoch: next.Number, Peers: []gateway.PeerChange{}}
	for _, c := range cluster.Diff(cur, next) {
		lc.Peers = append(lc.Peers, gateway.PeerChange{ID: c.ID, Kind: c.Kind(), From: weight(c.From), To: weight(c.To)})
	}
	return lc
}

// SetLayoutMode switches between automatic and manual layout changes.
func (g *Gateway) SetLayoutMode(ctx context.Context, mode string) (gateway.LayoutReply, error) {
	ctx, cancel := context.WithTimeout(ctx, layoutCallTimeout)
	defer cancel()
	e, err := g.node.SetLayoutMode(ctx, mode == gateway.LayoutManual)
	if err != nil {
		return gateway.LayoutReply{}, layoutRefusal(err)
	}
	g.log.Info().Uint64("epoch", e.Number).Str("mode", mode).Msg("layout mode set")
	return g.Layout(ctx), nil
}

// ApplyLayout mints the pending layout (manual mode).
func (g *Gateway) ApplyLayout(ctx context.Context) (gateway.LayoutReply, error) {
	ctx, cancel := context.WithTimeout(ctx, layoutCallTimeout)
	defer cancel()
	e, err := g.node.ApplyLayout(ctx)
	if err != nil {
		return gateway.LayoutReply{}, layoutRefusal(err)
	}
	g.log.Info().Uint64("epoch", e.Number).Int("peers", len(e.Peers)).Msg("layout applied")
	return g.Layout(ctx), nil
}

// layoutRefusal says what to do about a layout call the cluster refused.
func layoutRefusal(err error) error {
	switch {
	case errors.Is(err, cluster.ErrNoEpoch):
		return fmt.Errorf("%w: the ring has no epoch yet: a new cluster mints one once its peers have joined, "+
			"and tessera server places by membership, with no layout to manage", gateway.ErrAdminRequest)
	case errors.Is(err, cluster.ErrAutomatic):
		return fmt.Errorf("%w: the layout mode is automatic and changes apply by themselves; "+
			"switch with `tessera admin layout mode manual`", gateway.ErrAdminRequest)
	}
	return err
}

// Decommission drains a peer named by ID, unique ID prefix or address:
// the peer is told over its shard API, and the epochs that follow move
// its data away and then take it off the ring.
func (g *Gateway) Decommission(ctx context.Context, name string) (gateway.DecommissionReply, error) {
	m, err := resolvePeer(g.node.Peers(), name)
	if err != nil {
		return gateway.DecommissionReply{}, err
	}
	if cur, _ := g.node.Epoch(); cur.Number == 0 {
		return gateway.DecommissionReply{}, fmt.Errorf("%w: the ring has no epoch yet, so a drained peer would never leave it; "+
			"retry once the peers have joined (tessera server cannot decommission)", gateway.ErrAdminRequest)
	}
	if m.State != cluster.StateAlive {
		return gateway.DecommissionReply{}, fmt.Errorf("%w: peer %s is %s; only an alive peer can hand its data over",
			gateway.ErrAdminRequest, m.ID, m.State)
	}
	c, err := g.view.peer(meta.PeerID(m.ID))
	if err != nil {
		return gateway.DecommissionReply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		return gateway.DecommissionReply{}, fmt.Errorf("drain peer %s at %s: %w", m.ID, m.APIAddr, err)
	}
	g.log.Info().Str("peer", m.ID).Str("addr", m.APIAddr).Msg("decommission requested")
	return gateway.DecommissionReply{Peer: m.ID, Address: m.APIAddr}, nil
}

// resolvePeer finds the peer name stands for: its ID, its shard API or
// gossip address, or a prefix of exactly one peer's ID.
func resolvePeer(peers []cluster.Member, name string) (cluster.Member, error) {
	for _, m := range peers {
		if m.ID == name || m.APIAddr == name || (m.Addr != "" && m.Addr == name) {
			return m, nil
		}
	}
	var match []cluster.Member
	var known []string
	for _, m := range peers {
		known = append(known, m.ID+" ("+m.APIAddr+")")
		if strings.HasPrefix(m.ID, name) {
			match = append(match, m)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return cluster.Member{}, fmt.Errorf("%w: no peer has the ID or address %q; the peers are %s",
			gateway.ErrAdminRequest, name, strings.Join(known, ", "))
	}
	ids := make([]string, len(match))
	for i, m := range match {
		ids[i] = m.ID
	}
	return cluster.Member{}, fmt.Errorf("%w: %q begins the IDs of %s; give more of one",
		gateway.ErrAdminRequest, name, strings.Join(ids, ", "))
}
