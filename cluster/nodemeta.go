package cluster

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/memberlist"
)

// MetaMaxSize is the most bytes an encoded NodeMeta may take: memberlist
// carries node metadata in every alive message and panics beyond it.
const MetaMaxSize = memberlist.MetaMaxSize

// ErrMetaTooLarge reports a NodeMeta whose encoding exceeds MetaMaxSize.
var ErrMetaTooLarge = errors.New("cluster: node meta too large")

// NodeMeta is what a node tells the cluster about itself. It travels in
// every memberlist alive message, so it holds only slowly changing facts;
// per-request load belongs elsewhere.
type NodeMeta struct {
	ID       string `json:"id"`
	Role     Role   `json:"r"`
	APIAddr  string `json:"a,omitempty"` // shard API (peers) or S3 endpoint (gateways)
	Zone     string `json:"z,omitempty"` // failure domain
	Capacity uint64 `json:"c,omitempty"` // bytes
	Free     uint64 `json:"f,omitempty"` // bytes
	// LinkRate is the bytes/s a peer can send at best: its NIC speed, or
	// its configured send cap if lower; 0 when unknown. Read schedulers
	// predict transfer times from it.
	LinkRate float64 `json:"lr,omitempty"`
	// Leaving is set by Node.Leave just before the node's leave message,
	// so that others record it as Left rather than Dead. The Node forces
	// it; Config.Meta's value is ignored.
	Leaving bool `json:"l,omitempty"`
	// Draining marks a peer being decommissioned: the next epoch gives it
	// weight 0, data moves off it, and once it holds no objects it leaves
	// the ring.
	Draining bool `json:"d,omitempty"`
	// DiskFull marks a peer whose store counts as full (storage.Space):
	// it refuses new shards, so writes it belongs to are short one shard
	// until space returns and repair fills it.
	DiskFull bool `json:"df,omitempty"`
	// RingWidth is a peer's Config.RingWidth, the balancing goal it mints
	// epochs with, so that a node which does not propose (a gateway) can
	// compute the layout the proposer would.
	RingWidth int `json:"rw,omitempty"`
}

// EncodeMeta encodes m compactly (JSON with one-letter keys), failing
// with ErrMetaTooLarge if it does not fit MetaMaxSize.
func EncodeMeta(m NodeMeta) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode node meta: %w", err)
	}
	if len(b) > MetaMaxSize {
		return nil, fmt.Errorf("node meta of %d bytes, limit %d: %w", len(b), MetaMaxSize, ErrMetaTooLarge)
	}
	return b, nil
}

// DecodeMeta parses what EncodeMeta produced. The input comes from other
// nodes: anything malformed or oversized is an error, never a panic.
func DecodeMeta(b []byte) (NodeMeta, error) {
	if len(b) > MetaMaxSize {
		return NodeMeta{}, fmt.Errorf("node meta of %d bytes: %w", len(b), ErrMetaTooLarge)
	}
	var m NodeMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return NodeMeta{}, fmt.Errorf("decode node meta: %w", err)
	}
	if m.ID == "" {
		return NodeMeta{}, errors.New("decode node meta: missing id")
	}
	return m, nil
}
