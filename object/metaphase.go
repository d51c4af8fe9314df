package object

import (
	"context"
	"time"

	"tessera/meta"
)

// A client read asks a key's metadata in two phases, so that a GET costs
// no more peer calls than the read rule needs: first k peers of the
// default code's placement (the data shards' peers, which an inlined
// object is decoded from without reconstruction; the peers this layer
// avoids last) and enough of every other code's to rule out a hidden
// write of it (firstPhaseNeed),
// then the rest only when those answers do not settle the version (a
// write landing, a peer that lacks or fails to read its record) or do not
// all come within a hedge delay. decide treats the peers not yet asked as
// pending, so the first phase settles a read exactly when asking everyone
// and deciding on the same answers would have.
//
// Repairs and moves (asksAll) ask every peer at once: they want to know
// which peers lack the version.

// Bounds of the hedge delay: how long the first phase may take before the
// other peers are asked too. Between them it follows how long first
// phases have taken lately (metaHedge).
const (
	minMetaHedge = time.Millisecond
	// metaHedgeFactor times the recent first-phase time: a phase that
	// takes several times the usual has a slow peer in it.
	metaHedgeFactor = 4
)

// metaPhases splits q's peers into those asked first and the rest.
func (l *Layer) metaPhases(ctx context.Context, q querySet) (first, rest []meta.PeerID) {
	if asksAll(ctx) {
		return q.peers, nil
	}
	chosen := make(map[meta.PeerID]bool, len(q.peers))
	avoided := make(map[meta.PeerID]bool, len(q.peers))
	for _, p := range q.peers {
		avoided[p] = l.avoided(p)
	}
	for _, cs := range q.codes {
		picked := 0
		need := l.firstPhaseNeed(cs.code)
		for _, pass := range []bool{false, true} { // trusted peers first
			for _, p := range cs.peers {
				if picked < need && avoided[p] == pass {
					chosen[p] = true
					picked++
				}
			}
		}
	}
	for _, p := range q.peers {
		if chosen[p] {
			first = append(first, p)
		} else {
			rest = append(rest, p)
		}
	}
	return first, rest
}

// firstPhaseNeed is how many peers of a placement of code c the first
// phase asks: k for the default code, which most objects use, so that k
// matching records settle a version; for the other codes in use only as
// many as rule out a write of that code hidden on the others
// (querySet.covered), so that a key absent everywhere settles in the first
// phase too. A version of another code costs a second phase.
func (l *Layer) firstPhaseNeed(c meta.Code) int {
	if c == l.cfg.DefaultCode {
		return c.K
	}
	return c.N() - c.WriteQuorum() + 1
}

// metaHedge is how long to wait for the first phase before asking the
// other peers too.
func (l *Layer) metaHedge() time.Duration {
	avg := time.Duration(l.metaPhaseNs.Load())
	return min(max(metaHedgeFactor*avg, minMetaHedge), l.cfg.StallAfter)
}

// noteMetaPhase folds the time a first phase took to settle a read into
// the moving average behind metaHedge (weight 1/8 to the newest).
func (l *Layer) noteMetaPhase(d time.Duration) {
	for {
		old := l.metaPhaseNs.Load()
		next := old + (int64(d)-old)/8
		if old == 0 {
			next = int64(d)
		}
		if l.metaPhaseNs.CompareAndSwap(old, next) {
			return
		}
	}
}
