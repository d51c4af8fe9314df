// Package sim is a discrete-event simulator of GETs on an erasure-coded
// cluster, driving the real sched.Dispatcher of every gateway.
//
// Model: each peer has a NIC of fixed bandwidth shared by processor
// sharing among the chunk transfers it serves (from every gateway), after
// a fixed setup time per chunk (seek, request handling). Optionally
// (Hetero) one peer in ten runs at half speed, one at a quarter, and three
// in ten carry an on/off background load taking 60% of their NIC 30% of
// the time; Mixed gives the mixed NICs alone. Peers announce their NIC
// speed (sched.LinkSource), not their background load. Gateways are not
// modelled as bottlenecks, except for an optional front end (Frontend)
// that hands a burst's GETs to the fetch pool one at a time. GETs arrive
// in bursts of p with Weibull gaps scaled so the offered bytes are ρ of
// the aggregate peer bandwidth; sizes are lognormal (90% < 4 MiB, 99% <
// 16 MiB), codes (2,1), (4,2), (6,3), (10,4) uniformly (or Params.Codes),
// placement uniform over peers. With Objects, the workload is instead the
// one tessera bench offers a live cluster (Arrivals, ObjectSizes,
// ObjectOf), so live and simulated runs see the same GETs, and GETs may
// take the paths an earlier gateway took around its pool (InlineLimit,
// MaxPooled): inlined objects need no fetch, and chunks too large for the
// pool stream outside it from the holders a fixed ETA order (sched.ETA
// over a Tracker fed by every fetch) picks. A 1-s monitor
// samples every peer's bytes sent (throughput_send) and its CPU, taken as
// proportional to those bytes (the same cost per byte on every host), for
// the policies that read gossip.
//
// Invariants: a run is deterministic given its Params; the workload
// (arrivals, sizes, codes, placement, background toggles) depends only on
// the seeds, so policies are compared on common random numbers, and each
// latency carries its burst so that comparisons can pair bursts.
package sim
