package sched

import (
	"math"
	"time"

	"tessera/meta"
)

// Goodput estimation constants: a rate sample closes after sampleBusy of
// busy time, and an estimate decays back to the nominal rate with time
// constant decayTau, so a peer that was slow once is tried again later.
const (
	sampleBusy = 20 * time.Millisecond
	decayTau   = 2 * time.Second
	bwAlpha    = 0.3
)

// outcome is how a fetch ended.
type outcome uint8

const (
	outOK outcome = iota
	outFailed
	outCancelled
)

// peerState is what one gateway knows about one peer, exactly for what it
// did itself (in-flight bytes) and by measurement (goodput).
type peerState struct {
	id        meta.PeerID
	inflightB int64
	inflightN int
	assigned  int // early binding: fetches queued for this peer

	lastT    time.Duration
	busyAcc  time.Duration
	bytesAcc int64
	bw       float64 // EWMA of delivered bytes per busy second
	bwAt     time.Duration
	samples  int

	bucket           int64 // second index of sentCur
	sentCur, sentPrv int64

	chosen, skipped, failures uint64

	weight, baseWeight float64 // wlc
	hot, cold          int     // wlc-cpu: consecutive unbalanced rounds

	local bool // runs in the gateway's process (Config.Local)
}

func (d *Dispatcher) peer(id meta.PeerID) *peerState {
	p, ok := d.peers[id]
	if !ok {
		p = &peerState{id: id, weight: 1, baseWeight: 1, local: d.cfg.Local != nil && d.cfg.Local(id)}
		d.peers[id] = p
	}
	return p
}

// tick accounts busy time up to now.
func (p *peerState) tick(now time.Duration) {
	if now < p.lastT {
		return
	}
	if p.inflightN > 0 {
		p.busyAcc += now - p.lastT
	}
	p.lastT = now
}

func (p *peerState) begin(now time.Duration, bytes int64) {
	p.tick(now)
	p.inflightN++
	p.inflightB += bytes
}

// end closes one fetch of planned size bytes that delivered n.
func (p *peerState) end(now time.Duration, bytes, n int64, out outcome) {
	p.tick(now)
	p.inflightN--
	p.inflightB -= bytes
	switch out {
	case outFailed:
		p.failures++
		return
	case outCancelled:
		return
	}
	p.bytesAcc += n
	p.account(now, n)
	if p.busyAcc >= sampleBusy && p.bytesAcc > 0 {
		rate := float64(p.bytesAcc) / p.busyAcc.Seconds()
		if p.samples == 0 {
			p.bw = rate
		} else {
			p.bw += bwAlpha * (rate - p.bw)
		}
		p.samples++
		p.bwAt = now
		p.busyAcc, p.bytesAcc = 0, 0
	}
}

// account adds n bytes to this second's count of bytes received.
func (p *peerState) account(now time.Duration, n int64) {
	b := int64(now / time.Second)
	switch {
	case b == p.bucket:
	case b == p.bucket+1:
		p.sentPrv, p.sentCur = p.sentCur, 0
	default:
		p.sentPrv, p.sentCur = 0, 0
	}
	p.bucket = b
	p.sentCur += n
}

// mine is the bytes/s this gateway took from the peer over the last
// whole second.
func (p *peerState) mine(now time.Duration) float64 {
	switch int64(now/time.Second) - p.bucket {
	case 0:
		return float64(p.sentPrv)
	case 1:
		return float64(p.sentCur)
	}
	return 0
}

// nominal is the rate p is assumed to deliver when idle: its gossiped
// link rate, else Config.NominalBW.
func (d *Dispatcher) nominal(p *peerState) float64 {
	if ls, ok := d.cfg.Load.(LinkSource); ok {
		if r, ok := ls.LinkRate(p.id); ok && r > 0 {
			return r
		}
	}
	return d.cfg.NominalBW
}

// learnLinks raises fastest to the best link rate peers announce.
func (d *Dispatcher) learnLinks(peers []meta.PeerID) {
	ls, ok := d.cfg.Load.(LinkSource)
	if !ok {
		return
	}
	for _, id := range peers {
		if id == "" {
			continue // a holder the caller does not trust
		}
		if r, ok := ls.LinkRate(id); ok {
			d.fastest = max(d.fastest, r)
		}
	}
}

// agingRate converts eta's waiting time into bytes: the fastest link
// announced, else NominalBW. It follows the cluster's real speed, so one
// second of waiting weighs the same against a read's size on 100 Mbit/s
// peers as on 10 GbE ones.
func (d *Dispatcher) agingRate() float64 {
	if d.fastest > 0 {
		return d.fastest
	}
	return d.cfg.NominalBW
}

// rate is the peer's predicted delivery rate to this gateway: measured
// goodput decaying to its nominal rate, capped by what the others leave
// of that rate according to gossip.
func (d *Dispatcher) rate(p *peerState, now time.Duration) float64 {
	nom := d.nominal(p)
	bw := nom
	if p.samples > 0 {
		w := math.Exp(-float64(now-p.bwAt) / float64(decayTau))
		bw = nom + (p.bw-nom)*w
	}
	if d.cfg.Load != nil {
		if tps, _, ok := d.cfg.Load.Load(p.id); ok {
			others := max(0, tps-p.mine(now))
			bw = min(bw, max(nom-others, nom/10))
		}
	}
	return max(bw, 1)
}

// predict is the seconds a new fetch of bytes from p should take: a fixed
// setup cost, then the bytes in flight there (times the number of
// gateways, assuming the others act alike; for a local peer, in flight
// from every local peer) and its own at the predicted rate.
func (d *Dispatcher) predict(p *peerState, bytes int64, now time.Duration) float64 {
	inflight, rate := p.inflightB, 0.0
	if p.local {
		inflight, rate = d.localB, d.localRate(now)
	} else {
		rate = d.rate(p, now)
	}
	queued := float64(d.cfg.Gateways)*float64(inflight) + float64(bytes)
	return d.cfg.Setup.Seconds() + queued/rate
}

// localRate is the rate of the local peers, which share one process: the
// best any of them has shown. Their differences are the machine's noise,
// not links of their own, and a peer used less (a parity shard's) would
// otherwise keep an older, higher estimate and draw reads for no gain.
func (d *Dispatcher) localRate(now time.Duration) float64 {
	best := 1.0
	for _, p := range d.peers {
		if p.local {
			best = max(best, d.rate(p, now))
		}
	}
	return best
}

// gossip returns the peer's gossiped throughput_send and CPU, zero if
// unknown.
func (d *Dispatcher) gossip(id meta.PeerID) (float64, float64) {
	if d.cfg.Load == nil {
		return 0, 0
	}
	tps, cpu, ok := d.cfg.Load.Load(id)
	if !ok {
		return 0, 0
	}
	return tps, cpu
}
