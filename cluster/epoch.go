package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/memberlist"

	"tessera/cluster/ring"
	"tessera/meta"
)

// EpochPeer is one peer of an epoch record.
type EpochPeer struct {
	ID     string  `json:"id"`
	Weight float64 `json:"w"`
	Zone   string  `json:"z,omitempty"`
	Vnodes int     `json:"v"`
}

// Epoch is a ring layout: which peers are on the ring, with what weight
// and how many tokens. Membership is not layout: only a new epoch changes
// placement. Every node adopts the highest epoch it hears of; two records
// with one number (two proposers raced) are ordered by their hash, so all
// nodes still pick the same one.
type Epoch struct {
	Number uint64      `json:"n"`
	Peers  []EpochPeer `json:"p"` // sorted by ID
	// Manual is the layout mode: while set, the proposer mints nothing
	// and joins, capacity changes and decommissions wait for an operator
	// to apply them (Node.ApplyLayout). It travels in the record so every
	// node, and whichever peer proposes next, agrees on it with the
	// layout itself; omitted when false, so automatic records hash as
	// they did before the mode existed.
	Manual bool `json:"m,omitempty"`
}

// epochMsgMax bounds an epoch record from the network (about 10000 peers).
const epochMsgMax = 1 << 20

const msgEpoch byte = 'e'

// Hash identifies the record's content.
func (e Epoch) Hash() uint64 {
	b, _ := json.Marshal(e) // plain structs: cannot fail
	return xxhash.Sum64(b)
}

// newer reports whether e should replace cur.
func (e Epoch) newer(cur Epoch) bool {
	return e.Number > cur.Number || (e.Number == cur.Number && e.Number > 0 && e.Hash() > cur.Hash())
}

// sameLayout reports whether two records place keys identically.
func (e Epoch) sameLayout(o Epoch) bool { return slices.Equal(e.Peers, o.Peers) }

// Ring builds the epoch's ring.
func (e Epoch) Ring() (*ring.Ring, error) {
	peers := make([]ring.Peer, 0, len(e.Peers))
	for _, p := range e.Peers {
		// A weight-0 peer has no tokens; Vnodes 0 would mean "derive from
		// weight", so the weight must say it too.
		w := p.Weight
		if p.Vnodes == 0 {
			w = 0
		}
		peers = append(peers, ring.Peer{ID: meta.PeerID(p.ID), Weight: w, Zone: p.Zone, Vnodes: p.Vnodes})
	}
	return ring.New(peers, ring.Config{})
}

func encodeEpoch(e Epoch) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode epoch: %w", err)
	}
	return append([]byte{msgEpoch}, b...), nil
}

// decodeEpoch parses an epoch record from the network or disk; anything
// that could not build a ring is rejected.
func decodeEpoch(b []byte) (Epoch, error) {
	var e Epoch
	if len(b) < 2 || b[0] != msgEpoch {
		return e, errors.New("decode epoch: not an epoch record")
	}
	if len(b) > epochMsgMax {
		return e, fmt.Errorf("decode epoch: %d bytes", len(b))
	}
	if err := json.Unmarshal(b[1:], &e); err != nil {
		return e, fmt.Errorf("decode epoch: %w", err)
	}
	if err := e.validate(); err != nil {
		return e, fmt.Errorf("decode epoch: %w", err)
	}
	return e, nil
}

// validate rejects a record from the network or disk that could not
// build a ring.
func (e Epoch) validate() error {
	if e.Number == 0 {
		return errors.New("number 0")
	}
	if !slices.IsSortedFunc(e.Peers, func(a, b EpochPeer) int { return strings.Compare(a.ID, b.ID) }) {
		return errors.New("peers not sorted")
	}
	if _, err := e.Ring(); err != nil {
		return err
	}
	return nil
}

type epochBroadcast struct{ msg []byte }

func (b *epochBroadcast) Invalidates(o memberlist.Broadcast) bool {
	nb, ok := o.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.Name()
}
func (b *epochBroadcast) Name() string    { return "epoch" }
func (b *epochBroadcast) Message() []byte { return b.msg }
func (b *epochBroadcast) Finished()       {}
