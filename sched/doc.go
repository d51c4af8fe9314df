// Package sched decides which shards a gateway reads, and when.
//
// A read of an object coded with k data and m parity shards needs any k of
// its n = k+m shards. Two layers:
//
//   - Dispatcher is a gateway's fetch pool of L slots (the paper's L
//     download threads) run by a named policy (Policies): reads are
//     submitted, Dispatch returns Start, Cancel, Finish and Fail actions,
//     and the caller reports every started fetch with Done. The same code
//     runs in the gateway (object.FetchPool) and in the simulator (sim).
//     Early-binding policies (random, greedy, wlc, wlc-cpu, load) fix a
//     read's shards when it is planned and queue the fetches FIFO;
//     late-binding ones (eta, fcfs-r, serpt-r) pick the read and the shard
//     whenever a slot frees.
//   - Policy.Order (ETA, Random) ranks one read's shards for callers that
//     open shards themselves; the Tracker records what this gateway
//     observes per peer (in-flight bytes, throughput EWMA, failures).
//
// Priority: eta tags each fetch it starts with its read's size in bytes
// (Action.Priority). A peer that paces its sends (peer.SendLimit) sends
// tagged streams smallest first, aged by the time they have waited, so a
// small read is not held up behind a large one, even one from another
// gateway: shortest-first order then holds across gateways at the peers,
// where the gateways' own queues cannot reach. Untagged streams (every
// other policy) share the link as on a plain NIC.
//
// Invariants: the package is pure — no I/O, no goroutines, no logging. A
// Dispatcher only starts a fetch of a shard index its read has, from that
// shard's (non-empty) holder, never twice at once; never runs more than L
// fetches; finishes a read only after k distinct shards succeeded and
// fails it only when fewer than k holders are left. Dispatcher is not safe
// for concurrent use (its callers serialise); Tracker and every Policy are.
// Order always returns a permutation of 0..n-1 and never blocks.
package sched
