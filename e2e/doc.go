// Package e2e drives a real embedded tessera server — real storage peers on
// real disks, real sockets, real gossip — with real S3 clients (minio-go
// and aws-sdk-go-v2 at their default settings), including faults: wiped
// and corrupted peers, bad and fuzzed requests, and the fault suite of
// FAULTS.md, which kills, partitions and crashes separate processes under
// a load whose every acknowledged write it checks.
package e2e
