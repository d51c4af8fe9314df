package server

import (
	"time"

	"tessera/meta"
	"tessera/sched"
)

// statsMaxAge is how old a peer's gossiped stats (sent every second)
// may be and still count; older ones read as unknown.
const statsMaxAge = 5 * time.Second

// gossipLoad feeds the read scheduler the peers' gossiped send rate and
// CPU (cluster.Stats).
type gossipLoad struct{ g *Gateway }

// Load implements sched.LoadSource.
func (l gossipLoad) Load(id meta.PeerID) (float64, float64, bool) {
	m, ok := l.g.node.Member(string(id))
	if !ok || m.StatsAt.IsZero() || time.Since(m.StatsAt) > statsMaxAge {
		return 0, 0, false
	}
	return m.Stats.SendBps, m.Stats.CPU, true
}

// LinkRate implements sched.LinkSource with the peer's gossiped link
// rate.
func (l gossipLoad) LinkRate(id meta.PeerID) (float64, bool) {
	m, ok := l.g.node.Member(string(id))
	if !ok || m.LinkRate <= 0 {
		return 0, false
	}
	return m.LinkRate, true
}

// loadSource is GatewayConfig.Load, or the gossiped stats.
func (g *Gateway) loadSource() sched.LoadSource {
	if g.cfg.Load != nil {
		return g.cfg.Load
	}
	return gossipLoad{g}
}
