// Package ring places keys on storage peers by consistent hashing with
// virtual nodes (seed 004; research A6 items 7-9).
//
// Each peer owns a number of tokens on a 64-bit hash circle. Token j of a
// peer is the first 8 bytes of a hash of (peer ID, j), so the ring is a pure
// function of the peer list: every node that knows the same peers with the
// same weights computes the same ring, whatever order it learnt them in.
// A key is hashed onto the circle and Placement walks clockwise from it,
// taking distinct peers. Adding a peer only inserts its tokens, so a key's
// placement set changes only if the new peer enters it: about n/N of the
// keys move, never more.
//
// A peer's token count is round(Weight × VnodesPerWeight), at least one for
// a positive weight and zero for weight 0 (a decommissioned peer is listed
// but receives nothing). Peer.Vnodes overrides the computed count; it is
// the seam for capacity balancing with hysteresis, which adjusts counts per
// epoch instead of recomputing them from weights. Balance can even out
// either each peer's first-choice share of the circle or, given the number
// of distinct peers per key, its expected share of stored shards
// (Ring.StoredShares), which differs because a peer holds at most one
// shard of a key: that share is capped at 1/n.
//
// The package is pure: no I/O, no goroutines, no logging. A Ring is
// immutable after New and safe for concurrent use.
package ring
