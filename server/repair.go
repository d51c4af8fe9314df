package server

import (
	"context"

	"tessera/cluster"
	"tessera/object"
)

// startRepair runs the repair queue and a watcher that retries every
// waiting repair at once when a peer comes back or its full disk has room
// again, instead of letting each wait out its backoff.
func (g *Gateway) startRepair() {
	g.repair.Start(g.layer)
	g.migrate = object.NewMigrator(g.layer, object.MigratorConfig{Logger: g.cfg.Logger, Active: g.leadGateway,
		Settled: func(e uint64) { g.settled.Store(e) }, Unfinished: g.drainUnfinished})
	ctx, cancel := context.WithCancel(context.Background())
	g.stopBg = cancel
	ch, unsubscribe := g.node.Subscribe()
	done := make(chan struct{})
	scrubbed := make(chan struct{})
	go func() {
		defer close(scrubbed)
		g.watchScrub(ctx)
	}()
	go func() {
		defer close(done)
		defer unsubscribe()
		alive := g.writablePeers()
		// A gateway (re)starting may find an epoch whose move never
		// finished: one pass checks.
		epoch := g.RingEpoch()
		if epoch > 0 {
			g.migrate.Trigger(epoch)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
			}
			now := g.writablePeers()
			for id := range now {
				if !alive[id] {
					g.log.Info().Str("peer", id).Msg("peer back or its disk has room; retrying pending repairs")
					g.repair.Kick()
					break
				}
			}
			alive = now
			if e := g.RingEpoch(); e != epoch {
				g.log.Info().Uint64("epoch", e).Msg("ring epoch changed; moving data to the new placement")
				epoch = e
				g.migrate.Trigger(e)
			}
		}
	}()
	g.stopBg = func() { cancel(); <-done; <-scrubbed }
}

// drainUnfinished reports whether a peer left without tokens on the ring
// still reports holding objects: its drain needs another move pass.
func (g *Gateway) drainUnfinished() bool {
	for _, id := range g.view.Leaving() {
		if m, ok := g.node.Member(string(id)); ok && m.Stats.Objects > 0 {
			return true
		}
	}
	return false
}

// writablePeers are the peers alive and not reporting a full disk.
func (g *Gateway) writablePeers() map[string]bool {
	out := map[string]bool{}
	for _, m := range g.node.Peers() {
		if m.State == cluster.StateAlive && !m.DiskFull {
			out[m.ID] = true
		}
	}
	return out
}

// stopRepair stops the repair queue and its watcher, and the lifecycle
// worker; safe to call twice.
func (g *Gateway) stopRepair() {
	if g.lifecycle != nil {
		g.lifecycle.Close()
	}
	g.heals.close()
	if g.stopBg != nil {
		g.stopBg()
		g.stopBg = nil
	}
	if g.repair != nil {
		g.repair.Close()
	}
	if g.migrate != nil {
		g.migrate.Close()
		g.migrate = nil
	}
}

// leadGateway reports whether this gateway moves data on epoch changes:
// the alive gateway with the lowest ID does, so moves are not done twice.
func (g *Gateway) leadGateway() bool {
	for _, m := range g.node.Members() { // sorted by ID
		if m.Role == cluster.RoleGateway && m.State == cluster.StateAlive {
			return m.ID == g.id
		}
	}
	return false
}

// MigrationStats reports data movement after ring epoch changes.
func (g *Gateway) MigrationStats() object.MigrationStats { return g.migrate.Stats() }

// RepairPending is the number of objects known to lack a shard, for the
// status page's repair.pending.
func (g *Gateway) RepairPending() int { return g.repair.Pending() }

// RepairStats reports the repair queue's progress.
func (g *Gateway) RepairStats() object.RepairStats { return g.repair.Stats() }

// RingEpoch is the ring epoch this gateway places keys by (0: no epoch
// minted yet, the membership ring).
func (g *Gateway) RingEpoch() uint64 { return g.node.View().EpochNumber() }
