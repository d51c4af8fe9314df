package sched

import (
	"context"
	"errors"
	"sync"
	"time"

	"tessera/meta"
)

// TrackerConfig tunes a Tracker. Zero fields take the DefaultTrackerConfig
// values.
type TrackerConfig struct {
	// Alpha is the EWMA weight of a new throughput sample, in (0, 1].
	Alpha float64
	// PriorThroughput (bytes/s) stands in for peers never observed, so an
	// unknown peer competes as an average one rather than a perfect one.
	PriorThroughput float64
	// FailHold is how long a failure demotes a peer. A peer ordered last
	// is rarely tried, so demotion must expire on its own.
	FailHold time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// DefaultTrackerConfig returns the defaults: alpha 0.3, a 100 MB/s prior
// (a single disk behind 1 GbE) and a 10 s failure hold.
func DefaultTrackerConfig() TrackerConfig {
	return TrackerConfig{Alpha: 0.3, PriorThroughput: 100e6, FailHold: 10 * time.Second, Now: time.Now}
}

// PeerStat is a snapshot of what the tracker knows about one peer.
type PeerStat struct {
	InFlight   int64   // bytes of fetches begun and not done
	Throughput float64 // EWMA bytes/s; 0 if never observed
	Samples    int     // throughput observations folded in
	LastFail   time.Time
}

// Tracker records this gateway's in-flight bytes, observed throughput and
// failures per peer. Safe for concurrent use.
type Tracker struct {
	cfg   TrackerConfig
	mu    sync.Mutex
	peers map[meta.PeerID]*PeerStat
}

// NewTracker returns an empty tracker.
func NewTracker(cfg TrackerConfig) *Tracker {
	def := DefaultTrackerConfig()
	if cfg.Alpha <= 0 || cfg.Alpha > 1 {
		cfg.Alpha = def.Alpha
	}
	if cfg.PriorThroughput <= 0 {
		cfg.PriorThroughput = def.PriorThroughput
	}
	if cfg.FailHold <= 0 {
		cfg.FailHold = def.FailHold
	}
	if cfg.Now == nil {
		cfg.Now = def.Now
	}
	return &Tracker{cfg: cfg, peers: make(map[meta.PeerID]*PeerStat)}
}

// Begin records a fetch of bytes from peer and returns the function to
// call exactly once when it ends, with its error, the bytes actually
// transferred and its duration. Later calls of done are ignored.
//
// Outcomes: err nil folds n/dur into the throughput EWMA (when both are
// positive) and clears the peer's failure; context.Canceled (a hedged
// loser, a client gone) and meta.ErrNotFound (a missing shard, not a sick
// peer) say nothing about the peer; any other error marks it failed.
func (t *Tracker) Begin(peer meta.PeerID, bytes int64) (done func(err error, n int64, dur time.Duration)) {
	bytes = max(bytes, 0)
	t.mu.Lock()
	t.stat(peer).InFlight += bytes
	t.mu.Unlock()
	var once sync.Once
	return func(err error, n int64, dur time.Duration) {
		once.Do(func() { t.end(peer, bytes, err, n, dur) })
	}
}

func (t *Tracker) end(peer meta.PeerID, bytes int64, err error, n int64, dur time.Duration) {
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stat(peer)
	s.InFlight -= bytes
	switch {
	case err == nil:
		s.LastFail = time.Time{}
		if n > 0 && dur > 0 {
			t.observe(s, float64(n)/dur.Seconds())
		}
	case errors.Is(err, context.Canceled), errors.Is(err, meta.ErrNotFound):
	default:
		s.LastFail = now
	}
}

func (t *Tracker) observe(s *PeerStat, rate float64) {
	if s.Samples == 0 {
		s.Throughput = rate
	} else {
		s.Throughput += t.cfg.Alpha * (rate - s.Throughput)
	}
	s.Samples++
}

// stat returns the peer's record, creating it. Caller holds t.mu.
func (t *Tracker) stat(peer meta.PeerID) *PeerStat {
	s, ok := t.peers[peer]
	if !ok {
		s = &PeerStat{}
		t.peers[peer] = s
	}
	return s
}

// Stat returns a snapshot of one peer; the zero PeerStat if unknown.
func (t *Tracker) Stat(peer meta.PeerID) PeerStat {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.peers[peer]; ok {
		return *s
	}
	return PeerStat{}
}

// Stats returns a snapshot of every peer seen.
func (t *Tracker) Stats() map[meta.PeerID]PeerStat {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[meta.PeerID]PeerStat, len(t.peers))
	for id, s := range t.peers {
		out[id] = *s
	}
	return out
}

// view is what a policy needs about one peer at decision time.
type view struct {
	inFlight   float64
	throughput float64
	failed     bool
}

// views snapshots the given peers in one critical section, so one Order
// call sees a consistent state.
func (t *Tracker) views(peers []meta.PeerID) []view {
	now := t.cfg.Now()
	out := make([]view, len(peers))
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, id := range peers {
		v := view{throughput: t.cfg.PriorThroughput, failed: id == ""}
		if s, ok := t.peers[id]; ok {
			v.inFlight = float64(s.InFlight)
			if s.Samples > 0 && s.Throughput > 0 {
				v.throughput = s.Throughput
			}
			v.failed = v.failed || (!s.LastFail.IsZero() && now.Sub(s.LastFail) < t.cfg.FailHold)
		}
		out[i] = v
	}
	return out
}
