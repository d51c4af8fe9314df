// Package erasure stripes a byte stream into n = k+m Reed-Solomon shard
// streams over fixed-size blocks, and reads any k of them back, verifying a
// per-block checksum on every chunk before a byte of it is used.
//
// # Format
//
// An object (or one multipart part) of size bytes is cut into blocks of
// BlockSize bytes; the last block may be shorter. A block of L bytes is split
// into k data chunks of ceil(L/k) bytes each (the tail of the last data chunk
// is zero padding) and m parity chunks of the same length. Shard i's file is
// the concatenation, block by block, of
//
//	[4-byte big-endian CRC-32C][chunk i of the block]
//
// The checksum covers the shard index and the block index as well as the
// chunk (see chunkSum), so a chunk served under the wrong shard number or at
// the wrong block position fails verification just like flipped bits do. A
// 0-byte object has 0 blocks and empty shard files. Every block but the last
// has the same chunk length, so block j starts at j*(4+ceil(BlockSize/k)) in
// every shard file and a byte range of the object maps to one contiguous byte
// range of each shard file (ShardRange).
//
// # Invariants
//
//   - Decode and Rebuild never write a byte derived from a chunk that failed
//     its checksum: each block is verified (k chunks, each with its CRC)
//     before any of it is written, so on error the output is a correct prefix.
//   - A shard that fails (open error, read error, short read, checksum
//     mismatch) is closed and replaced by the next shard in the caller's
//     preference order at the current block. A shard dropped for a checksum
//     mismatch may be reopened for a later block once the order is exhausted,
//     because bitrot is usually local to one block.
//   - When the k shards in use are the data shards, no Reed-Solomon math runs.
//   - The encoding is deterministic: the same bytes and code give the same
//     shard files, which is what lets Rebuild restore a shard byte for byte.
//
// # Memory
//
// Memory per call is O(n * BlockSize/k) with a small constant, whatever the
// object size: Encode keeps at most writeQueue+2 stripes of n chunks in
// flight (one being filled, the rest queued for or being written by the
// slowest writer); Decode and Rebuild keep at most readAhead chunk buffers
// for each of the k shards being read (a dropped shard's buffers are
// recycled at once) plus one scratch chunk per reconstructed shard. Buffers
// are recycled through size-keyed sync.Pools.
//
// # Concurrency
//
// A Coder is immutable and safe for concurrent use. Encode runs one
// goroutine per writer; Decode and Rebuild run one goroutine per open shard.
// All of them have exited when the call returns. The package is pure: it does
// no logging and no network or disk I/O of its own.
package erasure
