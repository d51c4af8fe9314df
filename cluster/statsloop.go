package cluster

import "time"

// numMembers is the member count memberlist's broadcast queues size their
// retransmissions by.
func (n *Node) numMembers() int {
	if n.ml == nil {
		return 1
	}
	return n.ml.NumMembers()
}

// Epoch returns the ring epoch this node has adopted (zero before any)
// and the older layouts data may still sit on, newest first.
func (n *Node) Epoch() (cur Epoch, older []Epoch) { return n.meta.epochs.current() }

// Layouts returns the node's Layouts, which the caller must not modify,
// and a generation that changes whenever they do.
func (n *Node) Layouts() (l Layouts, gen uint64) { return n.meta.epochs.snapshot() }

// Settled is the newest epoch the data mover is known to have finished
// moving data to (0: none known).
func (n *Node) Settled() uint64 {
	l, _ := n.meta.epochs.snapshot()
	return l.Settled
}

// startStats runs the node's background loop until Close: every
// StatsInterval it gossips Config.Stats and samples its hosted members'
// stats, and when Config.Propose is set it checks whether a new ring
// epoch is due.
func (n *Node) startStats() {
	n.stopStats, n.statsDone = make(chan struct{}), make(chan struct{})
	p := newProposer(n)
	go func() {
		defer close(n.statsDone)
		t := time.NewTicker(min(StatsInterval, p.interval/2))
		defer t.Stop()
		for {
			now := time.Now()
			if now.Sub(n.lastStats) >= StatsInterval-StatsInterval/10 {
				n.lastStats = now
				n.publishStats(now)
			}
			if n.cfg.Propose {
				p.tick(now)
			}
			select {
			case <-n.stopStats:
				return
			case <-t.C:
			}
		}
	}()
}

// publishStats gossips the node's own stats and records its hosted
// members'.
func (n *Node) publishStats(now time.Time) {
	if n.cfg.Stats != nil {
		st := n.cfg.Stats()
		cur, _ := n.Epoch()
		st.Epoch = cur.Number
		if err := n.meta.stats.publish(st, now); err != nil {
			n.log.Warn().Err(err).Msg("stats not gossiped")
		}
	}
	for _, h := range n.hostedMembers() {
		h.sample(now)
	}
}

func (n *Node) stopStatsLoop() {
	if n.stopStats == nil {
		return
	}
	close(n.stopStats)
	<-n.statsDone
	n.meta.stats.forget()
	n.meta.epochs.queue.Reset()
}
