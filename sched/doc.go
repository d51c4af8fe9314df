// Package sched decides which shards a gateway reads first.
//
// A read of an object coded with k data and m parity shards needs any k of
// its n = k+m shards. A Policy orders the shard indexes: object fetches
// the first k and falls back to the rest in order. The Tracker records
// what this gateway itself observes per peer: bytes in flight, an EWMA of
// transfer throughput and the time of the last failure. Policies read it;
// object feeds it through Tracker.Begin around every shard fetch.
//
// Invariants: Order always returns a permutation of 0..n-1, for any input
// (k out of range included), and never blocks. The package is pure: no
// I/O, no goroutines, no logging. Tracker and every Policy are safe for
// concurrent use.
//
// The default policy, ETA, predicts each shard's completion time as
// (in-flight bytes + shard bytes) / throughput and prefers data shards,
// which need no Reed-Solomon reconstruction, unless a parity shard's peer
// is clearly faster. Shards on peers that failed recently go last.
package sched
