package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"tessera/cluster"
)

var (
	descMembers = prometheus.NewDesc("tessera_cluster_members",
		"Gossip members by role and state, as this gateway sees them.", []string{"role", "state"}, nil)
	descInflight = prometheus.NewDesc("tessera_sched_inflight_bytes",
		"Bytes of shard fetches begun and not done, per peer.", []string{"peer"}, nil)
	descPeerRate = prometheus.NewDesc("tessera_sched_peer_throughput_bytes_per_second",
		"Observed shard fetch throughput per peer (EWMA).", []string{"peer"}, nil)
	descFetches = prometheus.NewDesc("tessera_sched_shard_fetches_total",
		"Shard fetches this gateway's scheduler started, per peer.", []string{"peer"}, nil)
	descSkipped = prometheus.NewDesc("tessera_sched_shards_skipped_total",
		"Shards per peer a read could have fetched and the scheduler left unused.", []string{"peer"}, nil)
	descPoolSize  = prometheus.NewDesc("tessera_sched_pool_size", "Fetch pool slots.", nil, nil)
	descPoolInUse = prometheus.NewDesc("tessera_sched_pool_in_use", "Fetch pool slots in use.", nil, nil)
	descQueue     = prometheus.NewDesc("tessera_sched_queue_length", "Shard fetches waiting for the pool.", nil, nil)
	descRing      = prometheus.NewDesc("tessera_ring_epoch", "Ring epoch.", nil, nil)
	descVnodes    = prometheus.NewDesc("tessera_ring_vnodes", "Virtual nodes per peer.", []string{"peer"}, nil)
	descShare     = prometheus.NewDesc("tessera_ring_share", "Fraction of the hash space a peer owns.", []string{"peer"}, nil)
	descJob       = prometheus.NewDesc("tessera_job_pending", "Pending work of a background job.", []string{"job"}, nil)
	descJobDone   = prometheus.NewDesc("tessera_job_done_total", "Work items a background job finished.", []string{"job"}, nil)
	descJobFailed = prometheus.NewDesc("tessera_job_failed_total", "Work items a background job failed.", []string{"job"}, nil)
)

// statusCollector exposes the gateway's cluster view as gauges at scrape
// time. Figures another part does not report yet (fetch pool, epoch,
// repair and rebalance counts) are left out rather than sent as zero. It
// is an unchecked collector: peers come and go, so the series set varies.
type statusCollector struct{ g *Gateway }

func (c *statusCollector) Describe(chan<- *prometheus.Desc) {}

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.g.Status()
	counts := map[[2]string]int{}
	for _, role := range []cluster.Role{cluster.RolePeer, cluster.RoleGateway} {
		for _, s := range []cluster.State{cluster.StateAlive, cluster.StateSuspect, cluster.StateDead, cluster.StateLeft} {
			counts[[2]string{string(role), s.String()}] = 0
		}
	}
	for _, n := range st.Nodes {
		counts[[2]string{n.Role, n.State}]++
		if n.Role == string(cluster.RolePeer) {
			ch <- prometheus.MustNewConstMetric(descVnodes, prometheus.GaugeValue, float64(n.Vnodes), n.ID)
			ch <- prometheus.MustNewConstMetric(descShare, prometheus.GaugeValue, n.Share, n.ID)
		}
	}
	for k, v := range counts {
		ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(v), k[0], k[1])
	}
	for _, p := range st.Scheduler.Peers {
		ch <- prometheus.MustNewConstMetric(descInflight, prometheus.GaugeValue, float64(p.InFlightBytes), p.ID)
		ch <- prometheus.MustNewConstMetric(descPeerRate, prometheus.GaugeValue, p.Throughput, p.ID)
		ch <- prometheus.MustNewConstMetric(descFetches, prometheus.CounterValue, float64(p.Chosen), p.ID)
		ch <- prometheus.MustNewConstMetric(descSkipped, prometheus.CounterValue, float64(p.Skipped), p.ID)
	}
	gauge := func(d *prometheus.Desc, v *int) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*v))
		}
	}
	gauge(descPoolSize, st.Scheduler.PoolSize)
	gauge(descPoolInUse, st.Scheduler.PoolInUse)
	gauge(descQueue, st.Scheduler.Queue)
	if st.Ring.Epoch != nil {
		ch <- prometheus.MustNewConstMetric(descRing, prometheus.GaugeValue, float64(*st.Ring.Epoch))
	}
	for _, p := range c.g.scrubPeers() {
		if p.Report != nil {
			collectScrub(ch, p.Peer, p.Report)
		}
	}
	jobs := map[string]struct{ pending, done, failed *int64 }{
		"repair":    {st.Repair.Pending, st.Repair.Done, st.Repair.Failed},
		"rebalance": {st.Rebalance.Pending, st.Rebalance.Done, st.Rebalance.Failed},
	}
	if lc := st.Lifecycle; lc != nil {
		// Expired objects and aborted uploads are two jobs; their
		// failures are counted together, on the first.
		jobs["lifecycle_expire"] = struct{ pending, done, failed *int64 }{nil, &lc.Expired, &lc.Errors}
		jobs["lifecycle_abort"] = struct{ pending, done, failed *int64 }{nil, &lc.Aborted, nil}
		jobs["lifecycle_noncurrent"] = struct{ pending, done, failed *int64 }{nil, &lc.Noncurrent, nil}
	}
	for job, p := range jobs {
		if p.pending != nil {
			ch <- prometheus.MustNewConstMetric(descJob, prometheus.GaugeValue, float64(*p.pending), job)
		}
		if p.done != nil {
			ch <- prometheus.MustNewConstMetric(descJobDone, prometheus.CounterValue, float64(*p.done), job)
		}
		if p.failed != nil {
			ch <- prometheus.MustNewConstMetric(descJobFailed, prometheus.CounterValue, float64(*p.failed), job)
		}
	}
}
