package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

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
	if e.Number == 0 {
		return e, errors.New("decode epoch: number 0")
	}
	if !slices.IsSortedFunc(e.Peers, func(a, b EpochPeer) int { return strings.Compare(a.ID, b.ID) }) {
		return e, errors.New("decode epoch: peers not sorted")
	}
	if _, err := e.Ring(); err != nil {
		return e, fmt.Errorf("decode epoch: %w", err)
	}
	return e, nil
}

type epochBroadcast struct{ msg []byte }

func (b *epochBroadcast) Invalidates(o memberlist.Broadcast) bool {
	nb, ok := o.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.Name()
}
func (b *epochBroadcast) Name() string    { return "epoch" }
func (b *epochBroadcast) Message() []byte { return b.msg }
func (b *epochBroadcast) Finished()       {}

// epochs holds the epoch a node has adopted and the one before it (reads
// look at both placements while data moves), persists the current one
// when a file is configured, and spreads it: as a broadcast when it fits
// a gossip packet, and always in push/pull state exchanges.
type epochs struct {
	file  string
	log   zerolog.Logger
	reg   *registry
	queue *memberlist.TransmitLimitedQueue

	// adopting admits one adopter at a time, so the file always ends at
	// the newest record; mu guards cur and prev for readers, who never
	// wait for a write to disk.
	adopting  sync.Mutex
	mu        sync.Mutex
	cur, prev Epoch
}

func newEpochs(file string, reg *registry, log zerolog.Logger, numNodes func() int) *epochs {
	e := &epochs{file: file, log: log, reg: reg,
		queue: &memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: 3}}
	if file == "" {
		return e
	}
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		log.Warn().Err(err).Msg("epoch file unreadable; waiting for gossip")
	default:
		if ep, err := decodeEpoch(b); err != nil {
			log.Warn().Err(err).Msg("epoch file damaged; waiting for gossip")
		} else {
			e.cur = ep
		}
	}
	return e
}

// current returns the adopted epoch and its predecessor (zero when none).
func (e *epochs) current() (cur, prev Epoch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur, e.prev
}

// adopt makes ep current if it is newer, persisting and re-broadcasting it,
// and reports whether it did. The record is on disk before anyone can see
// it as current: a node never acts on a layout it could forget in a
// restart, and of two records adopted at once the newer is written last.
func (e *epochs) adopt(ep Epoch, origin string) bool {
	e.adopting.Lock()
	defer e.adopting.Unlock()
	cur, _ := e.current()
	if !ep.newer(cur) {
		return false
	}
	if ep.Number == cur.Number {
		e.log.Error().Uint64("epoch", ep.Number).Str("from", origin).
			Msg("two different records for one epoch; adopting the one with the higher hash")
	}
	b, err := encodeEpoch(ep)
	if err != nil {
		return false
	}
	e.persist(b)
	e.mu.Lock()
	if !ep.sameLayout(e.cur) {
		e.prev = e.cur
	}
	e.cur = ep
	e.mu.Unlock()
	if len(b) < 1200 { // else too big for a UDP packet: push/pull carries it
		e.queue.QueueBroadcast(&epochBroadcast{msg: b})
	}
	e.log.Info().Uint64("epoch", ep.Number).Int("peers", len(ep.Peers)).Str("from", origin).Msg("ring epoch adopted")
	e.reg.touch()
	return true
}

// persist writes the record durably (tmp, fsync, rename), so a restarted
// peer comes back with the layout it had.
func (e *epochs) persist(b []byte) {
	if e.file == "" {
		return
	}
	tmp := e.file + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, e.file)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(e.file)); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		e.log.Warn().Err(err).Str("file", e.file).Msg("epoch not persisted")
	}
}

// receive handles an epoch record from gossip or push/pull.
func (e *epochs) receive(b []byte, origin string) {
	ep, err := decodeEpoch(b)
	if err != nil {
		e.log.Warn().Err(err).Str("from", origin).Msg("epoch record rejected")
		return
	}
	e.adopt(ep, origin)
}

// localState is the current record for push/pull, nil before any.
func (e *epochs) localState() []byte {
	cur, _ := e.current()
	if cur.Number == 0 {
		return nil
	}
	b, _ := encodeEpoch(cur)
	return b
}
