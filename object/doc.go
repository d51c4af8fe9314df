// Package object is tessera's object layer: it turns S3 operations into
// erasure-coded shard writes and reads on the storage peers, through two
// small interfaces it declares (ShardClient, Cluster) so that it is tested
// against in-memory fakes.
//
// # Writes
//
// A PUT picks the code of its storage class, the key's n peers from the
// ring, and streams the body through the erasure encoder into n shard
// streams, each staged on its peer through a pipe: memory per request is a
// few blocks whatever the object size. Bodies of at most InlineLimit bytes
// are instead encoded in memory and their shards carried inside the
// metadata records (one durable write per peer). Once a write quorum
// (meta.Code.WriteQuorum) has staged its shard, the record is committed on
// each of those peers; the PUT succeeds when a write quorum accepted it. The
// version stamp is taken just before the commit from the Layer's hybrid
// logical clock (hlc.go): strictly increasing per Layer and above every
// stamp it has seen. A peer refuses a stamp not newer than what it holds
// and names that stamp; such refusals are no acknowledgement, and a commit
// they cost its quorum is restamped above them and sent again, so a write
// that starts after another was acknowledged wins whatever the gateways'
// clocks say. Until the commit nothing of the new version is visible, and
// a failed PUT leaves the previous version readable: each peer keeps the
// version its commit replaced until the writer, once its commit met the
// quorum, settles the new one (settle.go), so a write cut short between
// its peers' commits (its gateway killed) still leaves the old version
// whole on every peer.
//
// # Reads
//
// Metadata is read from every peer the key may live on, with the versions
// each keeps (ReadVersions), which count as copies. The current version
// is the newest stamp at least k peers hold; a newer stamp held by fewer is a
// write that never reached its quorum and is passed over, unless the peers
// that did not answer could hold enough of it, in which case the read fails
// with ErrQuorum rather than risk returning an overwritten version. A read
// also needs answers from enough peers that every possible write quorum of
// every code in use is intersected. A key is never reported absent while
// a version of it may be acknowledged: when the records show writes
// changing the key under the read (an overwrite or delete half landed),
// the read asks again shortly, for up to SettleWait, and then fails with
// ErrQuorum. Peers keep a replaced version's shard files for a grace
// period (storage.Config.RetireGrace), so a read that resolved the old
// version can finish it; a GET that saw a newer version landing checks
// before its response starts that k shards are still there, and resolves
// again if not (resolveToRead). Shards are then fetched through the
// FetchPool, whose policy (sched.Dispatcher) grants every fetch of every
// GET: large parts window by window (MaxPooledShard), inlined objects from
// the records at hand, first from the peers that may hold that version and,
// should those not suffice, from the doubtful ones too. The chunks of all
// GETs share one bound, Config.WindowMemory: a window waits for room before
// its fetches start, and a GET reads one window ahead only while there is
// room to spare, so memory stays flat however many GETs run. Each chunk is
// checksum-verified as it arrives (a damaged one is a failed fetch the
// policy replaces) and again as it is decoded, so a read never returns
// wrong bytes: it returns an error.
//
// # Repair and data movement
//
// Degraded writes and reads report to Config.Repair; RepairQueue holds
// those reports (in memory, one entry per object, per-object exponential
// backoff) and a rate-limited scanner walks every key as a backstop,
// deleted keys included, so what the queue lost in a restart is found
// again. Tombstones are repaired like objects; CollectTombstone removes
// one from every peer once no peer the key may live on (current and older
// layouts) holds anything but it and the grace period (a day by default)
// has outlived any write or repair still carrying an older version.
// RepairObject rebuilds the shards a peer lacks, holds stale or holds
// damaged, from k good ones, and commits them with the version's own
// stamp through RepairCommitter; a peer holding a newer version is never
// touched. After a ring epoch change, Migrator walks every object and
// MigrateObject moves only the shards whose peer left the placement
// (sticky distribution), relabels the peers that stay, then drops the old
// copies; reads consult the placements of every older layout data may
// not have left yet too (OlderPlacer), several when epochs follow each
// other faster than data moves.
//
// # Invariants
//
//   - Every peer call runs under ctx; metadata calls under a deadline that
//     follows the peer's latency (at most PeerTimeout), and a client's
//     shard streams fail over when they stall for StallAfter while others
//     progress (a repair's or move's after PeerTimeout). A peer that
//     stalled, or that gossip holds dead, is left out of new writes and
//     read last for StallHold (health.go).
//   - Every goroutine a method starts has exited when the method returns,
//     but for the background settles of a write (settle.go) and the late
//     metadata answers of a read (drainLate), each bounded in time.
//   - A body is read to io.EOF (a streaming-signed body proves itself only
//     at its end), never past its declared size plus one probing byte.
//   - Content-MD5 is checked before anything is committed.
//   - Degraded reads and writes are logged at Warn and reported through
//     Config.Repair for a later repair pass.
package object
