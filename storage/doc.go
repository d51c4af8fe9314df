// Package storage is one storage peer's disk store: buckets, object records
// with their shard files, and in-progress multipart uploads, all under one
// data directory.
//
// # Layout
//
//	DIR/.tmp/<uuid>                         staging: shards (StageShard) and record
//	                                        temp files; wiped on Open
//	DIR/index/                              pebble database: object records and the versions they keep (db.go, kept.go)
//	DIR/buckets/<bucket>/bucket.meta        bucket record (meta.Marshal)
//	DIR/buckets/<bucket>/config-<name>.meta bucket configuration (meta.BucketConfig, e.g. cors)
//	DIR/buckets/<bucket>/obj/<h[:2]>/<h>/   one object's shard files; h = hex sha256(key)
//	    <data dir>/part.<N>                 shard file of part N of one version
//	DIR/buckets/<bucket>/uploads/<h>/<id>/  one multipart upload
//	    upload.meta                         upload record
//	    part.<N>.meta                       part record: meta.Part + data file name
//	    part.<N>.<tmp uuid>                 shard file of part N
//
// Object records, inline shard bytes and tombstones included, are keys of
// the index, ordered for listing ('o' bucket 0x00 key, the key escaped and
// terminated so that a version suffix can follow it later: see db.go), so
// that a record read is a point get, a listing an iteration from its first
// key, and Open reads no record at all (except once, on a store made
// before tombstones were indexed by age: see tombindex.go). Inlined
// objects and tombstones have no object dir. Bucket records, bucket
// configuration and multipart uploads are still files (few, and read per
// bucket or per upload).
//
// Keys are arbitrary UTF-8 (up to 1024 bytes, "..", "/" and all, plus a
// version ID for a version key, meta.VersionKey), so a key never becomes
// a path: objects and uploads live under the hash of the key
// and the record carries the key itself. Bucket names (S3 rules) and upload
// IDs are validated strictly before they touch a path. The data dir of a
// version is meta.Stamp.String() plus a hash of the raw writer, because
// String maps distinct writers to one file-safe name.
//
// # Commit protocol and crash safety
//
// Shards are written to DIR/.tmp and fsynced by StageShard. Commit, under a
// per-key lock, rejects a stamp not newer than the current record
// (meta.ErrStale, nothing changes). For a stored object it makes the new
// data dir and hard-links the staged files into it, and one flush of a
// syncBatch makes the new dir entries and links durable. Only then is the
// record written: one pebble batch (the record, the live count of the
// bucket, and the entry mapping the object dir back to its key), applied
// with a synced WAL write before Commit returns. A record therefore only
// ever points at synced data, and a crash at any instant leaves either
// the old record or the new one: pebble applies a batch whole or not at
// all. Only then are the staged names removed. The previous version is
// kept, its record in the key's kept list (written by the same batch) and
// its data dir in place, until the new version is settled (Settle, after
// the write met its quorum): a write cut short between its peers' commits
// must leave the old version readable, and without these copies the old
// version could be on too few peers to be read (kept.go). A settled-away
// version's data dir is retired: it stays readable by its stamp for
// Config.RetireGrace, so reads that resolved it just before can finish,
// and is removed in the background (retire.go). Leftovers
// (staged files, data dirs no record or kept version points at, retired ones included,
// object dirs without a record) are invisible: staging is wiped on Open,
// and the rest is removed by a sweep that runs in the background after
// Open (sweep.go), taking each key's lock before it removes anything.
// Every directory a write creates is made durable by the flush that
// precedes the first durable reference to it.
//
// # Syncs
//
// A durable step on the filesystem flushes a syncBatch (batch.go): the
// files and dirs the step changed, fsynced in parallel, so that the
// filesystem commits them together (on ext4 one journal commit covers the
// fsyncs that arrive while the previous one is written). The index's
// step is pebble's synced batch: its commit pipeline writes the batches
// of concurrent committers to the WAL together and one fsync of the WAL
// covers them all (group commit), so an inlined object or a tombstone
// costs a share of one fsync instead of the two a record file and its
// dir used to. A stored object's commit is one syncBatch flush and one
// shared WAL sync. Group commit only shares an fsync among commits in
// flight together, a handful at a time; an S3 batch delete's tombstones
// come in one call instead (CommitTombstones, tombbatch.go), each key
// decided as Commit decides it, all of them in one synced batch. The staged shard's fsync stays in StageShard, off the
// key lock, overlapping the other peers' transfers; its bytes go out with
// O_DIRECT where the filesystem takes it (direct.go), since filling page
// cache with shard data cost more CPU than the rest of a large PUT.
//
// Why pebble and not bbolt: both are embedded, pure Go and well kept, but
// bbolt has one writer at a time and each synced transaction rewrites
// and fsyncs its B+tree pages and meta page, so concurrent small commits
// queue for the fsync instead of sharing it (bbolt's Batch merges them
// only with a delay and reruns a failing one alone). Pebble's WAL group
// commit is exactly the shape of a peer's write load, many concurrent
// small synced writes, and its LSM keeps keys ordered for listings with
// a bounded block cache (Config.CacheSize, DefaultCacheSize) and
// memtables, so memory does not grow with the object count. bbolt was not
// measured here.
//
// Measured and left out (BENCHMARKS.md): one syncfs(2) shared by every
// concurrent writer of the filesystem (group commit). It cut the syncs per
// commit to a fraction but gained nothing measurable on a disk shared with
// other work, since ext4 already shares journal commits among concurrent
// fsyncs, while it also writes back everything else dirty on the
// filesystem and, not knowing whose data a failed write back lost, has to
// fail every writer in flight.
//
// # Migration
//
// A store written before the index kept each record in a file,
// obj/<h[:2]>/<h>/meta. Its first Open moves them into the index in
// synced batches, removing each file after its batch, then records a
// marker so that later Opens skip the walk (layout.go); a crash in
// between is resumed by the next Open.
//
// # Index
//
// List iterates the index from max(prefix, after) and stops at the end of
// the prefix or the limit, tombstones included. With a delimiter it folds
// each common prefix (meta.FoldEntries): its keys up to the first live
// one, then a seek past the rest, so a top-level listing costs about one
// entry per prefix whatever the keys under it. Tombstones are listed so
// that the gateways' scanner can complete deletes that missed a peer; once
// a delete is complete and old enough, the gateways' tombstone collector
// removes it with DropVersion. The collector finds them without a
// listing: each tombstone also has an index entry ordered by its stamp,
// written and removed in the record's own batch, which ListTombstones
// reads from the oldest up to the grace period's cutoff. Records that fail their checksum are logged and left out
// of List (to the rest of the system a corrupt copy is a missing copy);
// ListRecords returns them as bare keys so that the scrubber finds them.
// Each bucket's live (not deleted) record count is kept in the index by
// the same batches (a merge operator adds deltas), so DeleteBucket and
// LiveObjects read a counter, not every record.
//
// # Faults
//
// Every filesystem error is returned wrapped; nothing panics on disk
// content. A disk whose files were overwritten with garbage or whose dirs
// vanished yields errors, meta.ErrNotFound or meta.ErrCorrupt; an index
// whose files hold garbage fails Open. A full disk yields errors wrapping
// ErrDiskFull. A write to the index's WAL that fails (a full disk) leaves
// pebble unable to go on: the commit fails with ErrDiskFull and the store
// with ErrIndexFailed until it is reopened, while the process and its
// other stores go on. So that a full disk does not come to that, a store
// that counts as full (Space) refuses new shards and every commit of a
// record other than a tombstone before anything is written; tombstones,
// which free space, still go into the reserve.
//
// Close flushes the index's memtables before it closes it, so that the
// next Open has no write-ahead log to replay and flush while the first
// requests wait. Nothing depends on that flush (every acknowledged write
// is already in the log), so Close gives up after DefaultCloseWait with
// ErrCloseTimeout rather than hold a process's exit on a disk that hangs.
//
// All methods are safe for concurrent use. A *Store has the method set of
// object.ShardClient, so it can stand in for a peer in-process.
package storage
