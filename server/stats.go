package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"tessera/cluster"
	"tessera/storage"
)

// stats is what a peer gossips every second: its shard API's traffic and
// requests in flight, and the host's CPU.
func (p *Peer) stats() cluster.Stats {
	send, recv := p.meter.Rate(time.Now())
	return cluster.Stats{SendBps: send, RecvBps: recv, CPU: p.cpu.Sample(), Active: p.meter.Active(),
		Objects: p.store.LiveObjects()}
}

// gatewayStats samples what a gateway gossips: CPU (its shard traffic is
// the peers' to report) and how far its data mover got. The CPU is the
// host's, or with process set this process's (tessera server, whose
// peers run in it).
func gatewayStats(settled *atomic.Uint64, process bool) func() cluster.Stats {
	var cpu interface{ Sample() float64 } = cluster.NewCPUSampler()
	if process {
		cpu = newProcCPU()
	}
	return func() cluster.Stats { return cluster.Stats{CPU: cpu.Sample(), Settled: settled.Load()} }
}

// metaRefresh is how often a peer checks whether its free bytes moved
// enough to re-advertise its NodeMeta (each advertisement costs a gossip
// broadcast, so small changes wait). Whether the disk is full is checked
// every fullCheck and advertised as soon as it changes: writes and
// readiness depend on it.
const (
	metaRefresh = 10 * time.Second
	fullCheck   = time.Second
)

// refreshMeta re-advertises the peer's meta when its disk became full or
// has room again, and when free bytes moved by more than 1% of capacity
// since the last advertisement. It returns the stop function.
func (p *Peer) refreshMeta() func() {
	stop, done := make(chan struct{}), make(chan struct{})
	sp, _ := p.store.Space()
	lastFree, lastFull, lastCheck := sp.Free, sp.Full, time.Now()
	logged := false // the full state last logged; a start with room says nothing
	go func() {
		defer close(done)
		t := time.NewTicker(fullCheck)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			sp, err := p.store.Space()
			if err != nil {
				continue
			}
			freeDue := time.Since(lastCheck) >= metaRefresh
			if freeDue {
				lastCheck = time.Now()
			}
			if sp.Full != logged {
				p.logFull(sp)
				logged = sp.Full
			}
			if sp.Full == lastFull && (!freeDue || absDiff(sp.Free, lastFree) <= sp.Capacity/100) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := p.node.UpdateMeta(ctx); err != nil {
				p.log.Debug().Err(err).Msg("free bytes not re-advertised")
			} else {
				lastFree, lastFull = sp.Free, sp.Full
			}
			cancel()
		}
	}()
	return func() { close(stop); <-done }
}

// logFull reports the store turning full (an operator must act: writes
// lose redundancy or fail) or getting room again.
func (p *Peer) logFull(sp storage.Space) {
	if sp.Full {
		p.log.Error().Uint64("free", sp.Free).Uint64("capacity", sp.Capacity).
			Msg("disk full: refusing new shards; writes go to the other peers and are repaired once space returns")
		return
	}
	p.log.Info().Uint64("free", sp.Free).Uint64("capacity", sp.Capacity).Msg("disk has room again: taking shards")
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
