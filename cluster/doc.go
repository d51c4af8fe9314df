// Package cluster wires tessera nodes together with hashicorp/memberlist
// gossip and turns what it learns into a view of the storage peers.
//
// Every node (storage peer or gateway) runs one Node. A Node gossips its
// NodeMeta (role, shard API address, zone, capacity, free bytes) in
// memberlist's node metadata, so it must encode within MetaMaxSize; Start
// and UpdateMeta refuse meta that does not fit rather than let memberlist
// panic. Gossip is encrypted and authenticated with a key derived from the
// cluster secret, so a node with another secret can neither join nor read.
//
// Membership is not layout. A Node remembers every member it has ever seen
// and only changes its State (Alive, Dead, Left), even after memberlist
// forgets a dead node: a peer that is down stays on the ring, reads of its
// shards go degraded, and only an explicit layout change (a later epoch)
// removes it. View builds the ring from the peers a Node knows and rebuilds
// it only when the set of peer IDs or zones changes, never because free
// bytes or liveness changed.
//
// A dead member is not given up on: memberlist never contacts a node it
// declared dead again, so every Timing.ReconnectInterval the Node joins
// the last address of each member it records Dead, and its join addresses
// while it sees nobody else alive (reconnect.go). A healed partition is
// alive on both sides within a few intervals.
//
// A Node can also host members that have no gossip endpoint of their own
// (Node.Host, hosted.go): the storage peers of `tessera server`, which live
// in the gateway's process. They are in the Node's registry like any
// member, so its View, subscribers and proposer see them, but nothing
// probes them: they are alive from Host until Hosted.Close, which records
// them dead at once, still on the ring. Their meta and stats go straight
// into the registry, and the host gossips them in their stats messages,
// so other nodes list them too (Member.Host) until they stop or their
// host dies.
//
// Fast-changing load figures (Stats: shard API throughput, CPU, requests
// in flight, ring epoch) do not go in NodeMeta: each node gossips them
// every StatsInterval as a small message under a named, invalidating
// broadcast, and every node passes on the newer ones it receives, so they
// are about a second old everywhere (Member.Stats).
//
// # Ring epochs
//
// With Config.Propose, the layout is an Epoch record: peers with weight
// (capacity in GiB, changed only when capacity moves by 5%) and token
// counts from ring.Balance, which adjusts counts with hysteresis until
// each peer's share follows its weight. The alive peer with the lowest ID
// mints a new epoch when the peer set has been still for ProposeInterval
// and the balanced layout differs; every node adopts the highest epoch
// (same number: higher hash, logged), persists it (Config.EpochFile) and
// passes it on by broadcast and push/pull. The View then builds the ring
// from the epoch and keeps the previous one, so reads can still find data
// that has not moved yet. Without epochs the ring is every peer seen,
// weight 1.
//
// An epoch also carries the layout mode (layoutmode.go). In manual mode
// the proposer mints nothing: what the peers call for is pending
// (Node.PendingLayout) until an operator applies it (Node.ApplyLayout),
// from any node. Automatic is the default.
//
// Concurrency: every Node and View method is safe for concurrent use.
// memberlist calls the delegates with its own locks held, so they only
// touch the Node's registry and never call back into memberlist. Close
// stops memberlist and every goroutine it started.
package cluster
