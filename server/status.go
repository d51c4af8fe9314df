package server

import (
	"fmt"
	"time"

	"tessera/cluster"
	"tessera/meta"
	"tessera/web"
)

// Status reports the cluster as this gateway sees it.
func (g *Gateway) Status() web.Status {
	view := g.node.View()
	st := web.Status{NodeID: g.id, Time: time.Now().UTC(), Code: g.cfg.Code.String()}
	for _, m := range g.node.Members() {
		n := web.Node{ID: m.ID, Role: string(m.Role), State: m.State.String(), Address: m.APIAddr,
			CapacityBytes: m.Capacity, FreeBytes: m.Free}
		if m.Role == cluster.RolePeer {
			r := view.Ring()
			n.Vnodes, n.Share = r.Vnodes(meta.PeerID(m.ID)), r.Share(meta.PeerID(m.ID))
		}
		st.Nodes = append(st.Nodes, n)
	}
	st.Ring.Peers = len(view.Peers())
	return st
}

// Ready reports whether writes at the default code can reach a quorum.
func (g *Gateway) Ready() error {
	alive := 0
	for _, m := range g.node.Peers() {
		if m.State == cluster.StateAlive {
			alive++
		}
	}
	if need := g.cfg.Code.WriteQuorum(); alive < need || len(g.node.View().Peers()) < g.cfg.Code.N() {
		return fmt.Errorf("not ready: %d peers alive of %d known; code %s needs %d peers and %d alive",
			alive, len(g.node.View().Peers()), g.cfg.Code, g.cfg.Code.N(), need)
	}
	return nil
}
