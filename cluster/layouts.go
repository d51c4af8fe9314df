package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// maxOlder bounds the earlier layouts a node keeps. Each one costs reads
// metadata lookups on its placement, so layouts are dropped once data is
// known to have left them (Layouts.Settled); the bound only matters when
// epochs follow one another faster than data moves.
const maxOlder = 8

// Layouts is a node's knowledge of where data may sit: the adopted epoch,
// the earlier layouts objects may not have left yet, and how far data is
// known to have moved.
type Layouts struct {
	Cur Epoch `json:"c"`
	// Older are earlier layouts, newest first, none placing keys like Cur.
	// The newest is always kept (a write that straddled the epoch change
	// may still land on it); the others only while Settled is below them.
	Older []Epoch `json:"o,omitempty"`
	// Settled is the newest epoch a full pass of the data mover found every
	// object placed by: layouts older than it hold nothing a read needs.
	Settled uint64 `json:"s,omitempty"`
}

// msgLayouts tags a Layouts record: push/pull state and the epoch file.
const msgLayouts byte = 'E'

// layoutsMsgMax bounds an encoded Layouts: maxOlder+1 epoch records.
const layoutsMsgMax = (maxOlder + 1) * epochMsgMax

func encodeLayouts(l Layouts) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode layouts: %w", err)
	}
	return append([]byte{msgLayouts}, b...), nil
}

// decodeLayouts parses a Layouts record, or a bare epoch record (an
// epoch file written before layouts were kept).
func decodeLayouts(b []byte) (Layouts, error) {
	if len(b) > 0 && b[0] == msgEpoch {
		e, err := decodeEpoch(b)
		return Layouts{Cur: e}, err
	}
	var l Layouts
	if len(b) < 2 || b[0] != msgLayouts {
		return l, errors.New("decode layouts: not a layouts record")
	}
	if len(b) > layoutsMsgMax {
		return l, fmt.Errorf("decode layouts: %d bytes", len(b))
	}
	if err := json.Unmarshal(b[1:], &l); err != nil {
		return l, fmt.Errorf("decode layouts: %w", err)
	}
	if len(l.Older) > maxOlder {
		return l, fmt.Errorf("decode layouts: %d older layouts", len(l.Older))
	}
	for _, e := range append([]Epoch{l.Cur}, l.Older...) {
		if err := e.validate(); err != nil {
			return l, fmt.Errorf("decode layouts: epoch %d: %w", e.Number, err)
		}
	}
	return l, nil
}

// ReadLayouts reads a node's epoch file (Config.EpochFile).
func ReadLayouts(file string) (Layouts, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Layouts{}, fmt.Errorf("read layouts: %w", err)
	}
	return decodeLayouts(b)
}

// normalize puts l in canonical form: older layouts below Cur, newest
// first, one of each placement, none placing like Cur, pruned by Settled
// and bounded by maxOlder. It returns the layouts dropped for the bound
// alone, whose data may not have moved.
func (l *Layouts) normalize() (lost []Epoch) {
	older := slices.Clone(l.Older)
	slices.SortStableFunc(older, func(a, b Epoch) int {
		switch {
		case a.newer(b):
			return -1
		case b.newer(a):
			return 1
		}
		return 0
	})
	kept := []Epoch{}
	for _, e := range older {
		switch {
		case l.Cur.Number == 0, e.Number == 0, !l.Cur.newer(e), e.sameLayout(l.Cur):
		case slices.ContainsFunc(kept, e.sameLayout):
		case len(kept) > 0 && e.Number < l.Settled:
		case len(kept) == maxOlder:
			lost = append(lost, e)
		default:
			kept = append(kept, e)
		}
	}
	l.Older = kept
	return lost
}

// epochs holds a node's Layouts, persists them when a file is configured,
// and spreads them: the current epoch as a broadcast when it fits a
// gossip packet, everything in push/pull state exchanges.
type epochs struct {
	file  string
	log   zerolog.Logger
	reg   *registry
	queue *memberlist.TransmitLimitedQueue

	// adopting admits one writer at a time, so the file always ends at the
	// newest state; mu guards l for readers, who never wait for a write
	// to disk.
	adopting sync.Mutex
	mu       sync.Mutex
	l        Layouts // replaced whole on change, never modified in place
	gen      uint64  // counts changes of l
}

func newEpochs(file string, reg *registry, log zerolog.Logger, numNodes func() int) *epochs {
	e := &epochs{file: file, log: log, reg: reg,
		queue: &memberlist.TransmitLimitedQueue{NumNodes: numNodes, RetransmitMult: 3}}
	if file == "" {
		return e
	}
	l, err := ReadLayouts(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		log.Warn().Err(err).Msg("epoch file unreadable or damaged; waiting for gossip")
	default:
		l.normalize()
		e.l = l
	}
	return e
}

// layouts returns a copy of the node's Layouts.
func (e *epochs) layouts() Layouts {
	l, _ := e.snapshot()
	l.Older = slices.Clone(l.Older)
	return l
}

// snapshot returns the Layouts, shared (read only), and their generation.
func (e *epochs) snapshot() (Layouts, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.l, e.gen
}

// current returns the adopted epoch and the older layouts.
func (e *epochs) current() (cur Epoch, older []Epoch) {
	l := e.layouts()
	return l.Cur, l.Older
}

// update applies change to a copy of the Layouts and, if that changed
// them, persists the result before publishing it: a node never acts on a
// layout it could forget in a restart, and of two updates at once the
// later is written last. It returns the Layouts before and after.
func (e *epochs) update(change func(*Layouts)) (before, after Layouts) {
	e.adopting.Lock()
	defer e.adopting.Unlock()
	before = e.layouts()
	after = before
	after.Older = slices.Clone(before.Older)
	change(&after)
	for _, lost := range after.normalize() {
		e.log.Warn().Uint64("epoch", lost.Number).Int("kept", maxOlder).
			Msg("dropping a layout data may not have left: epochs change faster than data moves")
	}
	if same(before, after) {
		return before, before
	}
	if b, err := encodeLayouts(after); err == nil {
		e.persist(b)
	}
	e.mu.Lock()
	e.l = after
	e.gen++
	e.mu.Unlock()
	return before, after
}

func same(a, b Layouts) bool {
	return a.Cur.Hash() == b.Cur.Hash() && a.Settled == b.Settled &&
		slices.EqualFunc(a.Older, b.Older, func(x, y Epoch) bool { return x.Hash() == y.Hash() })
}

// adopt makes ep current if it is newer, keeping the layout it replaces
// among the older ones, and re-broadcasts it. It reports whether it did.
func (e *epochs) adopt(ep Epoch, origin string) bool {
	before, after := e.update(func(l *Layouts) {
		if ep.newer(l.Cur) {
			l.Older = append([]Epoch{l.Cur}, l.Older...)
			l.Cur = ep
		}
	})
	if after.Cur.Hash() == before.Cur.Hash() {
		return false
	}
	if ep.Number == before.Cur.Number {
		e.log.Error().Uint64("epoch", ep.Number).Str("from", origin).
			Msg("two different records for one epoch; adopting the one with the higher hash")
	}
	if b, err := encodeEpoch(ep); err == nil && len(b) < 1200 { // else too big for a UDP packet: push/pull carries it
		e.queue.QueueBroadcast(&epochBroadcast{msg: b})
	}
	e.log.Info().Uint64("epoch", ep.Number).Int("peers", len(ep.Peers)).Int("older_layouts", len(after.Older)).
		Str("from", origin).Msg("ring epoch adopted")
	e.reg.touch()
	return true
}

// settle records that data has moved to epoch n, dropping the layouts
// older than it.
func (e *epochs) settle(n uint64) {
	e.mu.Lock()
	known := e.l.Settled
	e.mu.Unlock()
	if n <= known {
		return // every gossiped stats message says it again
	}
	before, after := e.update(func(l *Layouts) { l.Settled = max(l.Settled, n) })
	if len(after.Older) < len(before.Older) {
		e.log.Info().Uint64("settled", n).Int("older_layouts", len(after.Older)).Msg("data moved; older layouts dropped")
		e.reg.touch()
	}
}

// merge folds another node's Layouts into this one's. A current epoch
// older than ours joins our older layouts: a node that skipped it (it
// heard of the next one first) must still find data written under it.
func (e *epochs) merge(o Layouts, origin string) {
	e.adopt(o.Cur, origin)
	e.update(func(l *Layouts) {
		l.Older = append(append(l.Older, o.Cur), o.Older...)
		l.Settled = max(l.Settled, o.Settled)
	})
}

// persist writes the record durably (tmp, fsync, rename), so a restarted
// peer comes back with the layouts it had.
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

// receive handles an epoch record from gossip or a Layouts record from
// push/pull.
func (e *epochs) receive(b []byte, origin string) {
	l, err := decodeLayouts(b)
	if err != nil {
		e.log.Warn().Err(err).Str("from", origin).Msg("epoch record rejected")
		return
	}
	e.merge(l, origin)
}

// localState is the Layouts for push/pull, nil before any epoch.
func (e *epochs) localState() []byte {
	l := e.layouts()
	if l.Cur.Number == 0 {
		return nil
	}
	b, _ := encodeLayouts(l)
	return b
}
