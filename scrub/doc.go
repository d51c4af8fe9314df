// Package scrub is a storage peer's deep scrubber: in the background it
// reads every object record and every shard file its store holds, checks
// the record's checksum and every block's CRC-32C (erasure.VerifyShard),
// and keeps what fails as findings until the copy is repaired.
//
// # Why on the peers
//
// Verification runs where the bytes are. A gateway-side scrub would pull
// every shard of every object over the network, and every gateway would
// do it again; a peer reads only its own disk, so the work grows with the
// data each peer holds, not with the cluster. Repair still needs k good
// shards from other peers, which only the object layer can gather, so the
// peer does not repair: it reports. Gateways poll each peer's report
// (GET /v1/scrub on the shard API) and feed its findings into their
// repair queue, the path every other degraded object takes
// (object.RepairObject with the damaged shard as Suspect). Polling keeps
// peers free of any knowledge of gateways, works unchanged with several
// gateways and inside `tessera server`, and a finding survives a gateway
// restart because it lives on the peer until the copy is fixed.
//
// # Findings
//
// A finding names the key, the version and this peer's shard index (-1
// when the record itself is damaged). It is dropped once the record file
// is replaced (a repair or an overwrite installs a new record by rename)
// and the copy then verifies, or the key is gone; findings whose record
// did not change are verified again after an hour, so a transient read
// error does not linger. Findings and the pass position are saved in
// DIR/scrub.state, so a restarted peer resumes its pass where it stopped.
//
// # Pace
//
// A pass walks the store's buckets and keys in order. A scheduled pass
// starts every Interval (from the start of the previous one) and is
// paced to end within 90% of it: before each object it waits until its
// share of the interval, by the logical bytes of the objects before it,
// has passed. Every pass, scheduled or started now (Start, `tessera admin
// scrub`), is also held below BytesPerSec and ObjectsPerSec, so a pass
// that cannot fit the interval at those rates runs over, and the status
// says so. Multipart uploads in progress are not scrubbed: their parts
// are staged data that a complete or abort replaces.
package scrub
