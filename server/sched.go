package server

import "tessera/sched"

// SchedStatus returns the read scheduler's figures: policy, fetch pool
// size and use, reads queued, recent latency quantiles and per-peer
// counts (chosen, skipped, in flight, measured goodput). Read-only.
func (g *Gateway) SchedStatus() sched.Status { return g.pool.Status() }

// SetSchedPolicy switches the read scheduling policy for reads from now
// on; sched.ErrUnknownPolicy for a name sched.Policies does not list.
func (g *Gateway) SetSchedPolicy(name string) error {
	if err := g.pool.SetPolicy(name); err != nil {
		return err
	}
	g.log.Info().Str("policy", g.pool.Policy()).Msg("read scheduler switched")
	return nil
}
