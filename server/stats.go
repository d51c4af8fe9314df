package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"tessera/cluster"
)

// stats is what a peer gossips every second: its shard API's traffic and
// requests in flight, and the host's CPU.
func (p *Peer) stats() cluster.Stats {
	send, recv := p.meter.Rate(time.Now())
	return cluster.Stats{SendBps: send, RecvBps: recv, CPU: p.cpu.Sample(), Active: p.meter.Active(),
		Objects: p.store.LiveObjects()}
}

// gatewayStats samples what a gateway gossips: the host's CPU (its shard
// traffic is the peers' to report) and how far its data mover got.
func gatewayStats(settled *atomic.Uint64) func() cluster.Stats {
	cpu := cluster.NewCPUSampler()
	return func() cluster.Stats { return cluster.Stats{CPU: cpu.Sample(), Settled: settled.Load()} }
}

// metaRefresh is how often a peer checks whether its free bytes moved
// enough to re-advertise its NodeMeta (each advertisement costs a gossip
// broadcast, so small changes wait).
const metaRefresh = 10 * time.Second

// refreshMeta re-advertises the peer's meta when free bytes moved by more
// than 1% of capacity since the last advertisement. It returns the stop
// function.
func (p *Peer) refreshMeta() func() {
	stop, done := make(chan struct{}), make(chan struct{})
	_, last, _ := p.store.Stat()
	go func() {
		defer close(done)
		t := time.NewTicker(metaRefresh)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			capacity, free, err := p.store.Stat()
			if err != nil || absDiff(free, last) <= capacity/100 {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := p.node.UpdateMeta(ctx); err != nil {
				p.log.Debug().Err(err).Msg("free bytes not re-advertised")
			} else {
				last = free
			}
			cancel()
		}
	}()
	return func() { close(stop); <-done }
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// drainFile marks a peer being decommissioned, so a restart keeps
// draining.
const drainFile = "draining"

// drain starts decommissioning: it is remembered in dir and announced in
// the peer's meta; the epoch proposer then gives the peer weight 0, the
// gateways move its data away, and once it holds nothing it leaves the
// ring.
func (p *Peer) drain(ctx context.Context, dir string) error {
	if err := os.WriteFile(filepath.Join(dir, drainFile), []byte("draining\n"), 0o644); err != nil {
		return fmt.Errorf("mark draining: %w", err)
	}
	p.draining.Store(true)
	p.log.Info().Msg("decommission requested: draining")
	if p.node == nil {
		return nil
	}
	return p.node.UpdateMeta(ctx)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
