package server

import (
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"tessera/cluster"
	"tessera/meta"
	"tessera/sched"
	"tessera/storage"
	"tessera/web"
)

const (
	// displayBand is the half-width, relative to the mean, of the P = s/w
	// band the page draws while the ring balancer publishes no thresholds
	// of its own. The default 64 vnodes per weight keep shares within
	// roughly ±15% of proportional.
	displayBand = 0.15
	// latencyWindow is the span the GET latency quantiles cover.
	latencyWindow = 30 * time.Second
)

// Status reports the cluster as this gateway sees it. Figures no part of
// the system reports are left nil ("—" on the page): load figures before a
// member's first gossiped stats.
func (g *Gateway) Status() web.Status {
	st := web.Status{Version: g.version(), NodeID: g.id, Time: time.Now().UTC(), Code: g.cfg.Code.String(),
		Nodes: []web.Node{}, Errors: []web.LogLine{}}
	g.fillNodes(&st)
	g.fillScheduler(&st)
	if g.repair != nil {
		rs := g.repair.Stats()
		pending, done, failed := int64(rs.Pending), int64(rs.Repaired), int64(rs.Failed)
		st.Repair = web.Progress{Pending: &pending, Done: &done, Failed: &failed}
	}
	g.fillRebalance(&st)
	if g.lifecycle != nil {
		ls := g.lifecycle.Stats()
		st.Lifecycle = &web.Lifecycle{Passes: int64(ls.Passes), Expired: int64(ls.Expired), Noncurrent: int64(ls.Noncurrent), Aborted: int64(ls.Aborted), Errors: int64(ls.Errors)}
		if !ls.LastPass.IsZero() {
			t := ls.LastPass.UTC()
			st.Lifecycle.LastPass = &t
		}
	}
	fillUpgrades(&st)
	g.fillScrub(&st)
	if g.obs != nil {
		t := g.obs.s3.Totals()
		st.S3 = web.S3{Requests: t.Requests, Errors: t.ServerErrors, BytesIn: t.BytesIn, BytesOut: t.BytesOut, InFlight: t.InFlight}
		for i := range st.Nodes {
			// A gateway's own active requests are its S3 requests in flight.
			if st.Nodes[i].ID == g.id {
				st.Nodes[i].ActiveRequests = &t.InFlight
			}
		}
		st.Buckets = g.obs.buckets.snapshot()
	}
	return st
}

// fillUpgrades lists the stores of this process that are moving their
// records into their index: in `tessera server`, peers that serve only
// once that is done, and whose progress only this page can show.
func fillUpgrades(st *web.Status) {
	st.Upgrades = []web.Upgrade{}
	for _, u := range storage.LayoutUpgrades() {
		st.Upgrades = append(st.Upgrades, web.Upgrade{Dir: u.Dir, Moved: int64(u.Moved), Total: int64(u.Total), Started: u.Started.UTC()})
	}
}

// fillNodes lists the members with their ring figures: weight w is a
// peer's fraction of the total weight, share s its fraction of the hash
// circle, and P = s/w (seed 004).
func (g *Gateway) fillNodes(st *web.Status) {
	r := g.node.View().Ring()
	weights := map[meta.PeerID]float64{}
	var total float64
	for _, p := range r.Peers() {
		if p.Vnodes > 0 {
			weights[p.ID] = p.Weight
			total += p.Weight
		}
	}
	var sumP float64
	var nP int
	for _, m := range g.node.Members() {
		n := web.Node{ID: m.ID, Role: string(m.Role), State: m.State.String(), Address: m.APIAddr, Zone: m.Zone,
			CapacityBytes: m.Capacity, FreeBytes: m.Free, DiskFull: m.DiskFull}
		// Load figures of a member not alive are stale: leave them out.
		if !m.StatsAt.IsZero() && m.State == cluster.StateAlive {
			send, recv, cpu, active := m.Stats.SendBps, m.Stats.RecvBps, m.Stats.CPU, int64(m.Stats.Active)
			n.ThroughputSend, n.ThroughputRecv, n.CPU, n.ActiveRequests = &send, &recv, &cpu, &active
			if g.view.isLocal(meta.PeerID(m.ID)) {
				// A peer of this process: its CPU is the process's, on
				// the gateway's row.
				n.CPU = nil
			}
		}
		if m.Role == cluster.RolePeer {
			id := meta.PeerID(m.ID)
			n.Vnodes, n.Share = r.Vnodes(id), r.Share(id)
			if w := weights[id]; w > 0 && total > 0 {
				n.Weight = w / total
				p := n.Share / n.Weight
				n.P = &p
				sumP += p
				nP++
			}
			st.Ring.Vnodes += n.Vnodes
		}
		st.Nodes = append(st.Nodes, n)
	}
	sort.SliceStable(st.Nodes, func(i, j int) bool {
		if st.Nodes[i].Role != st.Nodes[j].Role {
			return st.Nodes[i].Role == string(cluster.RoleGateway)
		}
		return st.Nodes[i].ID < st.Nodes[j].ID
	})
	st.Ring.Peers = r.Len()
	// Epoch 0 is the membership ring (no epochs minted), a real state.
	epoch := g.node.View().EpochNumber()
	st.Ring.Epoch = &epoch
	_, older := g.node.Epoch()
	settled := g.node.Settled()
	st.Ring.OlderLayouts, st.Ring.Settled = len(older), &settled
	if nP > 0 {
		mean := sumP / float64(nP)
		lo, hi := mean*(1-displayBand), mean*(1+displayBand)
		st.Ring.PMean, st.Ring.PLow, st.Ring.PHigh, st.Ring.BandSource = &mean, &lo, &hi, "display"
	}
}

// fillRebalance reports data movement to the current ring epoch. Only the
// gateway that leads migration moves data; on the others the figures stay
// at zero and Moving reflects this gateway's own view.
func (g *Gateway) fillRebalance(st *web.Status) {
	m := g.migrate
	if m == nil {
		return
	}
	ms := m.Stats()
	moving := ms.Running || ms.Target > ms.Done
	objects, failed := int64(ms.Objects), int64(ms.Failed)
	st.Rebalance = web.Progress{Done: &objects, Failed: &failed, Running: &moving}
	st.Ring.Moving = &moving
}

// fillScheduler reports the fetch pool's policy and figures, which cover
// every GET's shard fetches (mergePool), and GET latency from the S3
// middleware.
func (g *Gateway) fillScheduler(st *web.Status) {
	sc := &st.Scheduler
	if g.obs != nil {
		if p50, p95, p99, ok := g.obs.s3.GetLatency(latencyWindow); ok {
			sc.GetP50, sc.GetP95, sc.GetP99 = &p50, &p95, &p99
		}
	}
	mergePool(sc, g.pool.Status())
}

// version is the binary's version as main set it, else the module's.
func (g *Gateway) version() string {
	if g.cfg.Version != "" {
		return g.cfg.Version
	}
	return buildVersion()
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return ""
}

// Ready reports whether a write at the default code would succeed: the
// object layer can place it (the ring is as wide as the code) and a write
// quorum of peers is alive with room on their disks.
func (g *Gateway) Ready() error {
	if err := g.layer.WriteReady(); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	alive, full := 0, 0
	for _, m := range g.node.Peers() {
		switch {
		case m.State != cluster.StateAlive:
		case m.DiskFull:
			full++
		default:
			alive++
		}
	}
	if need := g.cfg.Code.WriteQuorum(); alive < need {
		return fmt.Errorf("not ready: %d peers alive with room (%d more alive with full disks) of %d known; code %s needs %d",
			alive, full, len(g.node.View().Peers()), g.cfg.Code, need)
	}
	return nil
}

// mergePool puts the fetch pool's snapshot into the page's scheduler
// figures: policy, pool and queue, and per-peer choices (its counts of
// fetches started and shards left unused). Every GET's shard fetches go
// through the pool, so these count every GET; a GET of a part larger than
// one window (object.MaxPooledShard per shard) is one pool read per
// window. GET latency stays the S3 middleware's, end to end, unless it has
// none; then the pool's (queueing included, per pool read) stands in.
func mergePool(sc *web.Scheduler, ds sched.Status) {
	size, inUse, queue := ds.Slots, ds.InUse, ds.Queued
	sc.Policy, sc.PoolSize, sc.PoolInUse, sc.Queue = ds.Policy, &size, &inUse, &queue
	if sc.GetP50 == nil && ds.Finished > 0 {
		p50, p95, p99 := ds.P50.Seconds(), ds.P95.Seconds(), ds.P99.Seconds()
		sc.GetP50, sc.GetP95, sc.GetP99 = &p50, &p95, &p99
	}
	sc.Peers = make([]web.PeerChoice, 0, len(ds.Peers))
	for _, p := range ds.Peers {
		sc.Peers = append(sc.Peers, web.PeerChoice{ID: string(p.ID), Chosen: p.Chosen, Skipped: p.Skipped,
			InFlightBytes: p.Bytes, Throughput: p.Goodput})
	}
}
