package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tessera/cluster/ring"
)

// Layout changes an operator makes (tessera admin layout). In automatic
// mode, the default, the proposer mints every epoch the peers call for.
// In manual mode (Epoch.Manual) it mints none: the layout the peers call
// for is only pending (PendingLayout) until ApplyLayout mints it. Either
// call may run on any node, a gateway too, since it mints through the
// same adopt-and-spread path as the proposer; a record that loses to a
// concurrent one (same number, higher hash) is noticed and made again on
// top of the winner.

// Errors of the layout calls.
var (
	// ErrNoEpoch: the ring is still the membership ring (no epoch minted:
	// peers still joining, or tessera server, which mints none).
	ErrNoEpoch = errors.New("cluster: no ring epoch yet")
	// ErrAutomatic: ApplyLayout while the proposer applies changes itself.
	ErrAutomatic = errors.New("cluster: the layout mode is automatic; changes apply by themselves")
)

// mintAttempts bounds how often a layout call makes its record again
// after losing to a concurrent one.
const mintAttempts = 3

// PendingLayout returns the layout the peers call for now and whether it
// differs from the current epoch: what the proposer mints next in
// automatic mode, and what ApplyLayout mints in manual mode. Before the
// first epoch there is nothing pending.
func (n *Node) PendingLayout() (Epoch, bool) {
	cur, _ := n.Epoch()
	if cur.Number == 0 {
		return Epoch{}, false
	}
	return desiredEpoch(cur, n.Peers(), ring.BalanceConfig{Width: n.RingWidth()})
}

// RingWidth is the balancing width the proposer uses: this node's own
// when it proposes, else the one the alive peer with the lowest ID (the
// proposer) advertises.
func (n *Node) RingWidth() int {
	if n.cfg.Propose {
		return n.cfg.RingWidth
	}
	for _, m := range n.Peers() {
		if m.State == StateAlive {
			return m.RingWidth
		}
	}
	return 0
}

// SetLayoutMode switches the layout mode: manual stops the proposer from
// minting, automatic lets it apply what is pending. The switch is a new
// epoch with the current placement. It returns the epoch in force.
func (n *Node) SetLayoutMode(ctx context.Context, manual bool) (Epoch, error) {
	return n.mintUntil(ctx, false, func(cur Epoch) (Epoch, bool) {
		if cur.Manual == manual {
			return cur, true
		}
		next := cur
		next.Number, next.Manual = cur.Number+1, manual
		return next, false
	})
}

// ApplyLayout mints the pending layout in manual mode and returns the
// epoch in force; with nothing pending that is the current one.
// ErrAutomatic in automatic mode, where the proposer applies changes.
func (n *Node) ApplyLayout(ctx context.Context) (Epoch, error) {
	var want *Epoch
	return n.mintUntil(ctx, true, func(cur Epoch) (Epoch, bool) {
		if want != nil && cur.Number >= want.Number && cur.sameLayout(*want) {
			return cur, true // ours, or an identical one, won
		}
		next, ok := n.PendingLayout()
		if !ok {
			return cur, true
		}
		want = &next
		return next, false
	})
}

// mintUntil adopts the record step makes from the current epoch until
// step reports the current epoch done. After each record it waits a
// proposer interval, long enough for a concurrent record to arrive by
// broadcast, and looks again. With manualOnly it fails with ErrAutomatic
// once the mode is automatic.
func (n *Node) mintUntil(ctx context.Context, manualOnly bool, step func(cur Epoch) (next Epoch, done bool)) (Epoch, error) {
	wait := n.cfg.ProposeInterval
	if wait <= 0 {
		wait = DefaultProposeInterval
	}
	for range mintAttempts {
		cur, _ := n.Epoch()
		if cur.Number == 0 {
			return cur, ErrNoEpoch
		}
		if manualOnly && !cur.Manual {
			return cur, ErrAutomatic
		}
		next, done := step(cur)
		if done {
			return cur, nil
		}
		if n.meta.epochs.adopt(next, n.cfg.NodeID) {
			n.log.Info().Uint64("epoch", next.Number).Bool("manual", next.Manual).Msg("layout change minted")
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cur, _ = n.Epoch()
			return cur, fmt.Errorf("layout change: %w", ctx.Err())
		case <-t.C:
		}
	}
	cur, _ := n.Epoch()
	if _, done := step(cur); done {
		return cur, nil
	}
	return cur, fmt.Errorf("layout change lost to concurrent changes %d times; epoch %d is in force", mintAttempts, cur.Number)
}
