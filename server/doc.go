// Package server assembles tessera's roles from its parts: a storage peer
// (disk store, shard API, gossip member), a gateway (gossip member, object
// layer, S3 front end, status page), and the embedded server that runs a
// gateway and several peers in one process, the peers hosted by the
// gateway's gossip node (one membership view, no gossip of their own) and
// called directly by its object layer. main parses flags and calls these;
// end-to-end tests call them directly.
package server
