// Package storage is one storage peer's disk store: buckets, object records
// with their shard files, and in-progress multipart uploads, all under one
// data directory.
//
// # Layout
//
//	DIR/.tmp/<uuid>                         staging: shards (StageShard) and record
//	                                        temp files; wiped on Open
//	DIR/buckets/<bucket>/bucket.meta        bucket record (meta.Marshal)
//	DIR/buckets/<bucket>/config-<name>.meta bucket configuration (meta.BucketConfig, e.g. cors)
//	DIR/buckets/<bucket>/obj/<h[:2]>/<h>/   one object; h = hex sha256(key)
//	    meta                                object record, inline shard bytes included
//	    <data dir>/part.<N>                 shard file of part N of one version
//	DIR/buckets/<bucket>/uploads/<h>/<id>/  one multipart upload
//	    upload.meta                         upload record
//	    part.<N>.meta                       part record: meta.Part + data file name
//	    part.<N>.<tmp uuid>                 shard file of part N
//
// Keys are arbitrary UTF-8 (up to 1024 bytes, "..", "/" and all), so a key
// never becomes a path: objects and uploads live under the hash of the key
// and the record carries the key itself. Bucket names (S3 rules) and upload
// IDs are validated strictly before they touch a path. The data dir of a
// version is meta.Stamp.String() plus a hash of the raw writer, because
// String maps distinct writers to one file-safe name.
//
// # Commit protocol and crash safety
//
// Shards are written to DIR/.tmp and fsynced by StageShard. Commit, under a
// per-key lock, rejects a stamp not newer than the current record
// (meta.ErrStale, nothing changes), hard-links the staged files into the new
// data dir, fsyncs it, writes the record to a temp file, fsyncs it, renames it
// over meta and fsyncs the object dir. Only then are the staged names
// removed; the previous version's data dir is retired: it stays readable
// by its stamp for Config.RetireGrace, so reads that resolved it just
// before the commit can finish, and is removed in the background
// (retire.go). A crash at any instant therefore leaves either the old
// record or the new one, and a record only ever points at fsynced data.
// Leftovers (staged files, record temp files, data dirs no record points
// at, retired ones included, object dirs without a record) are invisible
// and removed on the next Open. Every directory a write creates is made durable by an
// fsync of its parent. An inlined object costs one durable record write and
// one dir fsync (plus parent fsyncs the first time a key's dirs are made).
//
// # Index
//
// Each bucket has a sorted in-memory index of its keys (latest record per
// key, tombstones included), built on Open by reading every record and kept
// current by commits; List serves from it. Records that fail their checksum
// are logged and left out: to the rest of the system a corrupt copy is a
// missing copy. Tombstones are listed so that the gateways' scanner can
// complete deletes that missed a peer; once a delete is complete and old
// enough, the scanner removes its tombstone with DropVersion, which takes
// the whole object dir, so a collected key is no longer read on Open.
//
// # Faults
//
// Every filesystem error is returned wrapped; nothing panics on disk
// content. A disk whose files were overwritten with garbage or whose dirs
// vanished yields errors, meta.ErrNotFound or meta.ErrCorrupt. A full disk
// yields errors wrapping ErrDiskFull.
//
// All methods are safe for concurrent use. A *Store has the method set of
// object.ShardClient, so it can stand in for a peer in-process.
package storage
