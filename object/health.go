package object

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"tessera/meta"
)

// errAvoided fails a call this layer did not make: the peer stalled
// recently or gossip holds it dead, and the operation can do without it.
var errAvoided = errors.New("peer avoided: stalled or not alive")

// Deadline policy of a metadata call: latencyMult times the peer's recent
// p99, never under the floor (Config.StallAfter) nor over the ceiling
// (Config.PeerTimeout). Until latencyMin samples exist the ceiling holds.
const (
	latencyWindow = 128
	latencyMin    = 16
	latencyMult   = 4
)

// health is what this layer saw of each peer: the latency of its
// metadata calls, to size their deadlines, and whether it stalled.
// A stalled peer is left out of new operations for StallHold; then one
// operation tries it again, and only a shard stream that goes through
// clears the mark, so a hung peer costs one probe per hold rather than
// every request. Safe for
// concurrent use.
type health struct {
	floor, ceil, hold time.Duration
	now               func() time.Time

	mu    sync.Mutex
	peers map[meta.PeerID]*peerHealth
}

type peerHealth struct {
	lat     []time.Duration // ring of recent latencies
	next    int
	stalled time.Time // when last marked stalled or probed; zero: healthy
}

func newHealth(floor, ceil, hold time.Duration, now func() time.Time) *health {
	return &health{floor: floor, ceil: ceil, hold: hold, now: now, peers: map[meta.PeerID]*peerHealth{}}
}

func (h *health) peer(id meta.PeerID) *peerHealth {
	p, ok := h.peers[id]
	if !ok {
		p = &peerHealth{}
		h.peers[id] = p
	}
	return p
}

// deadline is the time a metadata call to id may take, at most ceil.
func (h *health) deadline(id meta.PeerID, ceil time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.peer(id)
	if len(p.lat) < latencyMin {
		return ceil
	}
	return min(max(latencyMult*p.p99(), h.floor), ceil)
}

// observe records a successful metadata call of id that took d.
func (h *health) observe(id meta.PeerID, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.peer(id)
	if len(p.lat) < latencyWindow {
		p.lat = append(p.lat, d)
	} else {
		p.lat[p.next] = d
		p.next = (p.next + 1) % latencyWindow
	}
}

// p99 is the 99th percentile of p's recent latencies. Every call sizes
// its deadline with it and every answer adds a sample, so rather than
// sort the window each time it finds the few largest samples in one pass:
// in a window of at most latencyWindow the percentile is at most the
// third largest.
func (p *peerHealth) p99() time.Duration {
	n := len(p.lat)
	rank := n - (n-1)*99/100 // the rank-th largest sample
	var top [3]time.Duration // the largest so far, in descending order
	if rank > len(top) {
		sorted := slices.Clone(p.lat)
		slices.Sort(sorted)
		return sorted[n-rank]
	}
	for _, d := range p.lat {
		if d <= top[rank-1] {
			continue
		}
		i := rank - 1
		for i > 0 && top[i-1] < d {
			top[i] = top[i-1]
			i--
		}
		top[i] = d
	}
	return top[rank-1]
}

// recovered clears id's stall mark: a shard stream to or from it went
// through. Only a stream clears it, since a peer may answer metadata
// calls while its streams hang. It reports whether a mark was cleared.
func (h *health) recovered(id meta.PeerID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.peers[id]
	if !ok || p.stalled.IsZero() {
		return false
	}
	p.stalled = time.Time{}
	return true
}

// stall marks id as stalled now. It reports whether id was healthy until
// then, so that a peer that stays stalled through its probes is reported
// once, not once per probe.
func (h *health) stall(id meta.PeerID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.peer(id)
	first := p.stalled.IsZero()
	p.stalled = h.now()
	return first
}

// avoid reports whether to leave id out of a new operation. Once a
// mark is older than the hold, the first caller is let through as a
// probe and the mark restarts, so concurrent operations keep avoiding
// the peer until the probe's outcome is known.
func (h *health) avoid(id meta.PeerID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.peers[id]
	if !ok || p.stalled.IsZero() {
		return false
	}
	now := h.now()
	if now.Sub(p.stalled) < h.hold {
		return true
	}
	p.stalled = now
	return false
}

// stall marks id as stalled, and logs it when the peer was healthy: the
// writes that leave it out while the mark holds are logged at debug
// level only (degradedWrite), since one stall would otherwise log a
// warning per write for the whole hold.
func (l *Layer) stall(id meta.PeerID, what string) {
	if l.health.stall(id) {
		l.log.Warn().Str("peer", string(id)).Str("during", what).Dur("hold", l.cfg.StallHold).
			Msg("peer stalled: left out of new operations until a probe gets through")
	}
}

// recovered clears id's stall mark after a shard stream went through,
// and logs the recovery of a peer that was marked.
func (l *Layer) recovered(id meta.PeerID) {
	if l.health.recovered(id) {
		l.log.Info().Str("peer", string(id)).Msg("stalled peer answers again")
	}
}

// avoided reports whether l should leave peer out of a new operation:
// gossip holds it not alive, or it stalled lately.
func (l *Layer) avoided(id meta.PeerID) bool {
	if l.cfg.Alive != nil && !l.cfg.Alive(id) {
		return true
	}
	return l.health.avoid(id)
}

type everyKey struct{}

// everyPeer marks ctx as an operation that must not leave out a peer
// for having stalled lately (nor for gossip holding it dead): it tries
// every peer, as a repair's or move's own calls do. A multipart upload's
// steps need this: each part is written on its own, and parts that were
// kept from different peers (each while another request had that peer
// marked) leave no peer holding its shard of every part, which Complete
// needs. Calls that stall are still given up, so a hung peer costs each
// step about StallAfter, and the same peer misses every part.
func everyPeer(ctx context.Context) context.Context { return context.WithValue(ctx, everyKey{}, true) }

// asksAll reports whether ctx's operation asks every peer (everyPeer,
// or a repair's or move's quiet ctx).
func asksAll(ctx context.Context) bool {
	v, _ := ctx.Value(everyKey{}).(bool)
	return v || isQuiet(ctx)
}

// leaveOut returns failed with errAvoided set for the avoided peers among
// those not failed yet, as long as need others remain; else failed as
// is, since trying a doubtful peer beats failing outright. failed is not
// modified.
func (l *Layer) leaveOut(peers []meta.PeerID, failed []error, need int) []error {
	out := slices.Clone(failed)
	left := 0
	for i, id := range peers {
		if out[i] != nil {
			continue
		}
		if l.avoided(id) {
			out[i] = errAvoided
		} else {
			left++
		}
	}
	if left < need {
		return failed
	}
	return out
}
