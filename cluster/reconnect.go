package cluster

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Why the Node dials the dead itself: memberlist never contacts a member
// it has declared dead again. It stops probing it at once, gossips to it
// only for GossipToTheDeadTime and then forgets it, and push/pull only
// picks live members. When a partition heals, both sides therefore keep
// believing the other dead for good, and the cut-off node, which declared
// everyone dead, talks to nobody. (serf, memberlist's usual wrapper, has a
// reconnect loop for this; tessera uses memberlist directly.)
//
// So every ReconnectInterval the Node joins — a full push/pull state
// exchange — the last gossip address of each member it records Dead (not
// Left), and its configured join addresses while it sees no other member
// alive. The first exchange across a healed partition tells each side the
// other believed it dead; each refutes with a higher incarnation, and the
// next exchange (or gossip) carries that back, so both are alive again
// within about two intervals.

const (
	// DefaultReconnectInterval is Timing.ReconnectInterval's default.
	DefaultReconnectInterval = 2 * time.Second
	// reconnectFor is how long a dead member's address is still dialled.
	// A node that restarts joins through its own join addresses; this is
	// for partitions, and stops a gateway that restarted under a new name
	// from being dialled under its old one forever. Consul's default.
	reconnectFor = 72 * time.Hour
	// reconnectBatch bounds the dead members dialled per interval, so a
	// cluster with many dead members does not dial them all at once.
	reconnectBatch = 8
)

// reconnector runs the Node's reconnect loop. Dials run concurrently, one
// at a time per address: an unreachable one blocks for TCPTimeout.
type reconnector struct {
	n        *Node
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	dials    sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]bool
}

func (n *Node) startReconnect() {
	r := &reconnector{n: n, interval: n.cfg.Timing.ReconnectInterval, stop: make(chan struct{}),
		done: make(chan struct{}), inflight: map[string]bool{}}
	n.reconnect = r
	go r.loop()
}

func (r *reconnector) loop() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		for _, addr := range r.targets(time.Now()) {
			r.dial(addr)
		}
	}
}

// targets are the addresses to dial this round: up to reconnectBatch dead
// members' (at random), and the join addresses when no other member is
// alive.
func (r *reconnector) targets(now time.Time) []string {
	self := r.n.cfg.NodeID
	var dead []string
	othersAlive := false
	for _, m := range r.n.reg.list(nil) {
		switch {
		case m.ID == self, m.Addr == "": // a hosted member has no gossip endpoint
		case m.State == StateAlive:
			othersAlive = true
		case m.State == StateDead && m.Addr != "" && now.Sub(m.Since) < reconnectFor:
			dead = append(dead, m.Addr)
		}
	}
	rand.Shuffle(len(dead), func(i, j int) { dead[i], dead[j] = dead[j], dead[i] })
	out := dead[:min(len(dead), reconnectBatch)]
	if !othersAlive {
		out = append(out, r.n.cfg.Join...)
	}
	return out
}

// dial joins addr in the background unless a dial to it is in flight.
func (r *reconnector) dial(addr string) {
	r.mu.Lock()
	if r.inflight[addr] {
		r.mu.Unlock()
		return
	}
	r.inflight[addr] = true
	r.dials.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.dials.Done()
		defer func() {
			r.mu.Lock()
			delete(r.inflight, addr)
			r.mu.Unlock()
		}()
		if _, err := r.n.ml.Join([]string{addr}); err != nil {
			r.n.log.Debug().Err(err).Str("addr", addr).Msg("reconnect failed")
			return
		}
		r.n.log.Debug().Str("addr", addr).Msg("reconnected: state exchanged")
	}()
}

// halt stops the loop; wait then waits for dials in flight, which end by
// TCPTimeout at the latest (sooner once memberlist shut down).
func (r *reconnector) halt() {
	close(r.stop)
	<-r.done
}

func (r *reconnector) wait() { r.dials.Wait() }
