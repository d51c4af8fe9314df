package server

import (
	"context"
	"sort"

	"tessera/cluster"
	"tessera/gateway"
	"tessera/meta"
	"tessera/object"
)

// The admin API's cluster reports (gateway.ClusterAdmin, ClassAdmin):
// what this gateway already knows from gossip, its repair queue, its data
// mover and its last poll of the peers' scrub reports. Nothing here waits
// on a peer, so status answers while the cluster is degraded.

// ClusterStatus reports the members, the ring and the background jobs.
func (g *Gateway) ClusterStatus(ctx context.Context) gateway.ClusterStatus {
	st := gateway.ClusterStatus{Gateway: g.id, Version: g.version(), Code: g.cfg.Code.String(),
		Nodes: []gateway.AdminNode{}, Classes: g.StorageClasses()}
	r := g.node.View().Ring()
	for _, m := range g.node.Members() {
		n := gateway.AdminNode{ID: m.ID, Role: string(m.Role), State: m.State.String(), Since: m.Since,
			Address: m.APIAddr, Zone: m.Zone, CapacityBytes: m.Capacity, FreeBytes: m.Free,
			DiskFull: m.DiskFull, Draining: m.Draining}
		if m.Role == cluster.RolePeer {
			n.Vnodes = r.Vnodes(meta.PeerID(m.ID))
		}
		st.Nodes = append(st.Nodes, n)
	}
	sort.SliceStable(st.Nodes, func(i, j int) bool {
		if st.Nodes[i].Role != st.Nodes[j].Role {
			return st.Nodes[i].Role == string(cluster.RoleGateway)
		}
		return st.Nodes[i].ID < st.Nodes[j].ID
	})
	st.Ring = g.ringSummary()
	rs := g.repair.Stats()
	st.Repair = gateway.RepairSummary{Pending: rs.Pending, Repaired: rs.Repaired, Failed: rs.Failed, ScanPasses: rs.ScanPasses}
	if g.migrate != nil {
		ms := g.migrate.Stats()
		st.Rebalance = gateway.MoveSummary{Running: ms.Running, Target: ms.Target, Done: ms.Done,
			Objects: ms.Objects, Bytes: ms.Bytes, Failed: ms.Failed}
	}
	st.Scrub = g.scrubSummary()
	return st
}

// ringSummary is the ring in one line: epoch, mode, size, and whether data
// still moves to it.
func (g *Gateway) ringSummary() gateway.RingSummary {
	r := g.node.View().Ring()
	cur, older := g.node.Epoch()
	rs := gateway.RingSummary{Epoch: cur.Number, Mode: layoutMode(cur), Peers: r.Len(),
		OlderLayouts: len(older), Settled: g.node.Settled(), Moving: g.dataMoving(cur.Number)}
	for _, p := range r.Peers() {
		rs.Vnodes += p.Vnodes
	}
	if next, ok := g.node.PendingLayout(); ok {
		rs.PendingChanges = len(cluster.Diff(cur, next))
	}
	return rs
}

// dataMoving reports whether data is still moving to epoch: this
// gateway's mover is at it, or the lead gateway has not yet reported a
// full pass at it.
func (g *Gateway) dataMoving(epoch uint64) bool {
	if g.migrate != nil {
		if ms := g.migrate.Stats(); ms.Running || ms.Target > ms.Done {
			return true
		}
	}
	return epoch > 0 && g.node.Settled() < epoch
}

func layoutMode(e cluster.Epoch) string {
	switch {
	case e.Number == 0:
		return gateway.LayoutMembership
	case e.Manual:
		return gateway.LayoutManual
	}
	return gateway.LayoutAuto
}

// scrubSummary sums the peers' scrub reports as last polled.
func (g *Gateway) scrubSummary() gateway.ScrubSummary {
	var s gateway.ScrubSummary
	for _, p := range g.scrubPeers() {
		r := p.Report
		if r == nil {
			continue
		}
		s.Peers++
		if r.Pass != nil {
			s.Running++
		}
		if r.Last != nil && (s.LastFinished == nil || r.Last.Finished.Before(*s.LastFinished)) {
			s.LastFinished = timePtr(r.Last.Finished)
		}
		s.ObjectsChecked += r.Totals.ObjectsChecked
		s.CorruptFound += r.Totals.CorruptFound
		s.Repaired += r.Totals.Repaired
		s.Pending += int64(r.Pending)
	}
	return s
}

// StorageClasses lists the classes this gateway writes, with their codes,
// as the object layer resolves them: STANDARD is --ec and
// REDUCED_REDUNDANCY (n-1)+1 unless --storage-class redefines it.
func (g *Gateway) StorageClasses() []gateway.StorageClass {
	codes := map[string]meta.Code{object.ClassStandard: g.cfg.Code}
	if n := g.cfg.Code.N(); n >= 2 {
		codes[object.ClassReduced] = meta.Code{K: n - 1, M: 1}
	} else {
		codes[object.ClassReduced] = g.cfg.Code
	}
	for name, c := range g.cfg.Classes {
		if name != object.ClassStandard {
			codes[name] = c
		}
	}
	out := make([]gateway.StorageClass, 0, len(codes))
	for name, c := range codes {
		out = append(out, gateway.StorageClass{Name: name, Code: c.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
