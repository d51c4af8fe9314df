package sched

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"tessera/meta"
)

// ReqID names one read in a Dispatcher; the caller picks it, unique among
// reads not yet finished.
type ReqID uint64

// Request is one read: Peers[i] holds shard i ("" means no known holder),
// any K shards of ChunkBytes each rebuild it.
type Request struct {
	ID         ReqID
	Peers      []meta.PeerID
	K          int
	ChunkBytes int64
}

// ActionKind says what the caller must do.
type ActionKind uint8

// Actions a Dispatcher asks of its caller.
const (
	// Start: fetch Shard of Req from Peer; report with Done.
	Start ActionKind = iota + 1
	// Cancel: abort the fetch of Shard of Req; its slot is already free
	// and Done for it is ignored.
	Cancel
	// Finish: K shards of Req are done.
	Finish
	// Fail: Req can no longer gather K shards.
	Fail
)

// PeerAging is how a peer that orders tagged streams (Action.Priority)
// ages them: it sends the stream of lowest Priority + PeerAging x rate x
// start time first, rate being its send rate in bytes/s and start in
// seconds. A stream that has waited t seconds thus competes as if it
// were PeerAging x t seconds of sending smaller, so none waits forever.
const PeerAging = 0.25

// Action is one decision.
type Action struct {
	Kind  ActionKind
	Req   ReqID
	Shard int
	Peer  meta.PeerID
	Hedge bool // a k+1-th fetch started against a straggler
	// Priority, when positive, asks the peer to send this fetch before
	// its others of larger Priority (see Priority in doc.go); 0 leaves
	// the peer's order alone.
	Priority int64
}

// LoadSource is the gossiped view of a peer: bytes it sent in the last
// sampling period per second, and CPU utilisation in [0, 1].
type LoadSource interface {
	Load(peer meta.PeerID) (throughputSend, cpu float64, ok bool)
}

// LinkSource is implemented by a LoadSource that also knows each peer's
// link rate: the bytes/s it can send at best (its NIC, or a configured
// cap below it). ETA then predicts from that rate instead of NominalBW,
// so a slow NIC is known before any fetch from it is measured, and a
// measured estimate decays back to the peer's own rate, not a fast
// default.
type LinkSource interface {
	LinkRate(peer meta.PeerID) (bytesPerSec float64, ok bool)
}

// Config tunes a Dispatcher. Zero fields take the defaults in brackets.
type Config struct {
	Slots     int           // fetch pool size, the paper's L [20]
	Gateways  int           // gateways sharing the peers, for concurrency compensation [1]
	PeerCap   int           // eta: most fetches in flight per peer [8]
	NominalBW float64       // bytes/s a peer of unknown link rate is assumed to deliver before measured [125e6]
	Setup     time.Duration // eta: fixed cost per chunk fetch [2ms]
	Window    time.Duration // load: wait this long after the first arrival to close a batch [0]
	Aging     float64       // eta: seconds of transfer at the fastest known link that one second of waiting offsets [0.03]
	HedgeRate float64       // eta: hedges per finished read, at most [0.05]; negative disables
	Period    time.Duration // wlc-cpu: re-weighting round [5s]
	Load      LoadSource    // gossiped throughput_send and CPU; nil reads as idle
	Seed      uint64        // random choices
	// DecodeRate (eta) is the bytes/s at which the gateway rebuilds a
	// missing data chunk from K others [2e9]: a parity fetch costs that
	// decode on top of its transfer, a data shard none.
	DecodeRate float64
	// Local (eta), when set, reports the peers that run in the gateway's
	// own process (tessera server's): they share its CPU and disk, not a
	// link each, so a fetch from one waits behind every fetch in flight
	// from any of them, and spreading reads over them buys nothing.
	Local func(meta.PeerID) bool
}

func (c *Config) defaults() {
	if c.Slots <= 0 {
		c.Slots = 20
	}
	if c.Gateways <= 0 {
		c.Gateways = 1
	}
	if c.PeerCap <= 0 {
		c.PeerCap = 8
	}
	if c.NominalBW <= 0 {
		c.NominalBW = 125e6
	}
	if c.Setup <= 0 {
		c.Setup = 2 * time.Millisecond
	}
	if c.DecodeRate <= 0 {
		c.DecodeRate = 2e9
	}
	if c.Aging <= 0 {
		c.Aging = 0.03
	}
	if c.HedgeRate == 0 {
		c.HedgeRate = 0.05
	}
	if c.Period <= 0 {
		c.Period = 5 * time.Second
	}
}

// Shard states inside a read.
const (
	shIdle uint8 = iota
	shQueued
	shFlight
	shDone
	shFailed
)

type fetch struct {
	start time.Duration
	pred  float64 // predicted seconds, for hedging
	hedge bool
}

// reqState is a read the Dispatcher is working on.
type reqState struct {
	Request
	arrival  time.Duration
	state    []uint8
	fetches  []fetch
	inflight int
	done     int
	planned  bool
	hedged   bool
	heapIdx  int // position in the late heap, -1 when out
	key      float64
	seq      uint64
}

func (r *reqState) holder(s int) bool { return s < len(r.Peers) && r.Peers[s] != "" }

// idle reports whether shard s may still be fetched.
func (r *reqState) idle(s int) bool { return r.state[s] == shIdle && r.holder(s) }

func (r *reqState) usable() int {
	n := 0
	for s := range r.state {
		if r.state[s] != shFailed && r.holder(s) {
			n++
		}
	}
	return n
}

// Dispatcher is a gateway's fetch pool scheduler: reads wait in it, and
// it decides which shard fetch takes each free slot of the pool. It does
// no I/O and starts no goroutines; the caller performs the Actions and
// reports back. Not safe for concurrent use: callers serialise (object's
// pool does, the simulator is single-threaded).
type Dispatcher struct {
	cfg    Config
	pol    policy
	rng    *rand.Rand
	reqs   map[ReqID]*reqState
	peers  map[meta.PeerID]*peerState
	busy   int
	out    []Action
	seq    uint64
	fifo   taskQueue   // early binding: planned fetches in order
	unplan []*reqState // early binding: reads not planned yet
	heap   reqHeap     // late binding: reads that may take a fetch
	hedge  hedger
	hedges hedgeHeap // eta: regular fetches that may need a hedge
	stats  counters
	// fastest is the highest link rate any submitted read's holder
	// announced, 0 while none has: the rate eta's aging is counted in.
	fastest float64
	// localB is the bytes in flight from local peers (Config.Local).
	localB int64
}

// policy is the part that differs between named policies.
type policy interface {
	name() string
}

// earlyPolicy fixes a read's shards when it is planned; fetches then wait
// in one FIFO for a slot.
type earlyPolicy interface {
	policy
	plan(d *Dispatcher, batch []*reqState, now time.Duration)
}

// latePolicy chooses the read and the shard when a slot frees.
type latePolicy interface {
	policy
	key(d *Dispatcher, r *reqState) float64 // lower goes first
	redundant() bool                        // may a read use all n shards
	choose(d *Dispatcher, r *reqState, now time.Duration) int
}

// ErrDuplicate reports a Submit with the ID of a read still in progress.
var ErrDuplicate = errors.New("sched: duplicate read id")

// NewDispatcher returns a Dispatcher running the named policy.
func NewDispatcher(name string, cfg Config) (*Dispatcher, error) {
	cfg.defaults()
	d := &Dispatcher{
		cfg:   cfg,
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		reqs:  make(map[ReqID]*reqState),
		peers: make(map[meta.PeerID]*peerState),
	}
	p, err := newPolicy(name, d)
	if err != nil {
		return nil, err
	}
	d.pol = p
	d.hedge.init(cfg.HedgeRate)
	d.stats.init()
	return d, nil
}

// Policies lists the names NewDispatcher accepts; the first is the default.
func Policies() []string {
	return []string{"eta", "load", "greedy", "wlc", "wlc-cpu", "fcfs-r", "serpt-r", "random"}
}

func newPolicy(name string, d *Dispatcher) (policy, error) {
	switch name {
	case "eta", "default", "":
		return &etaPolicy{}, nil
	case "load":
		return &loadPolicy{}, nil
	case "greedy":
		return greedyPolicy{}, nil
	case "wlc":
		return &wlcPolicy{}, nil
	case "wlc-cpu":
		return &wlcPolicy{cpu: true}, nil
	case "fcfs-r":
		return fcfsPolicy{}, nil
	case "serpt-r":
		return serptPolicy{}, nil
	case "random":
		return randomPolicy{}, nil
	}
	return nil, fmt.Errorf("%w %q (have %v)", ErrUnknownPolicy, name, Policies())
}

// Policy returns the name of the policy in force.
func (d *Dispatcher) Policy() string { return d.pol.name() }

// Busy returns the slots in use.
func (d *Dispatcher) Busy() int { return d.busy }

// Pending returns the reads submitted and not finished or failed.
func (d *Dispatcher) Pending() int { return len(d.reqs) }

// Submit queues a read. A read no K holders can serve fails at once.
func (d *Dispatcher) Submit(now time.Duration, r Request) error {
	if _, dup := d.reqs[r.ID]; dup {
		return fmt.Errorf("%w %d", ErrDuplicate, r.ID)
	}
	rs := &reqState{Request: r, arrival: now, state: make([]uint8, len(r.Peers)),
		fetches: make([]fetch, len(r.Peers)), heapIdx: -1, seq: d.seq}
	d.seq++
	rs.K = max(rs.K, 1)
	d.reqs[r.ID] = rs
	if rs.usable() < rs.K {
		d.fail(now, rs)
		return nil
	}
	if _, ok := d.pol.(latePolicy); ok {
		d.learnLinks(rs.Peers)
		d.heapPush(rs)
	} else {
		d.unplan = append(d.unplan, rs)
	}
	return nil
}

// Done reports the end of a fetch Start asked for: err nil with n bytes
// received, or the failure. Fetches cancelled or unknown are ignored.
func (d *Dispatcher) Done(now time.Duration, id ReqID, shard int, err error, n int64) {
	r, ok := d.reqs[id]
	if !ok || shard < 0 || shard >= len(r.state) || r.state[shard] != shFlight {
		return
	}
	f := r.fetches[shard]
	out := outOK
	if err != nil {
		out = outFailed
	}
	d.release(now, r, shard, n, out)
	if err != nil {
		r.state[shard] = shFailed
		d.replace(now, r)
		return
	}
	r.state[shard] = shDone
	r.done++
	d.hedge.observe(now-f.start, f.pred)
	if r.done >= r.K {
		d.finish(now, r)
		return
	}
	d.rekey(r)
}

// replace lets a read whose fetch failed take another shard, or fails it.
func (d *Dispatcher) replace(now time.Duration, r *reqState) {
	if r.usable() < r.K {
		d.fail(now, r)
		return
	}
	if _, ok := d.pol.(latePolicy); ok {
		d.rekey(r)
		return
	}
	for s := range r.state {
		if r.idle(s) {
			r.state[s] = shQueued
			d.fifo.pushFront(task{r: r, shard: s})
			return
		}
	}
}

func (d *Dispatcher) finish(now time.Duration, r *reqState) {
	for s, st := range r.state {
		if st != shDone && r.holder(s) {
			d.peer(r.Peers[s]).skipped++
		}
	}
	d.cancelRest(now, r)
	d.drop(r)
	d.stats.latency(now - r.arrival)
	d.hedge.earn()
	d.out = append(d.out, Action{Kind: Finish, Req: r.ID})
}

func (d *Dispatcher) fail(now time.Duration, r *reqState) {
	d.cancelRest(now, r)
	d.drop(r)
	d.stats.failed++
	d.out = append(d.out, Action{Kind: Fail, Req: r.ID})
}

// cancelRest cancels a read's fetches in flight and unqueues the rest.
func (d *Dispatcher) cancelRest(now time.Duration, r *reqState) {
	for s, st := range r.state {
		switch st {
		case shFlight:
			d.release(now, r, s, 0, outCancelled)
			r.state[s] = shIdle
			d.out = append(d.out, Action{Kind: Cancel, Req: r.ID, Shard: s, Peer: r.Peers[s]})
		case shQueued:
			r.state[s] = shIdle
			d.peer(r.Peers[s]).assigned--
		}
	}
}

func (d *Dispatcher) drop(r *reqState) {
	delete(d.reqs, r.ID)
	if r.heapIdx >= 0 {
		d.heapRemove(r)
	}
	r.planned = true // never planned again if still in unplan
}

// release frees the slot of one fetch of r.
func (d *Dispatcher) release(now time.Duration, r *reqState, s int, n int64, out outcome) {
	d.busy--
	r.inflight--
	p := d.peer(r.Peers[s])
	p.end(now, r.ChunkBytes, n, out)
	if p.local {
		d.localB -= r.ChunkBytes
	}
}

// start puts shard s of r in flight.
func (d *Dispatcher) start(now time.Duration, r *reqState, s int, hedge bool) {
	p := d.peer(r.Peers[s])
	if r.state[s] == shQueued {
		p.assigned--
	}
	r.state[s] = shFlight
	r.inflight++
	d.busy++
	r.fetches[s] = fetch{start: now, pred: d.predict(p, r.ChunkBytes, now), hedge: hedge}
	p.begin(now, r.ChunkBytes)
	if p.local {
		d.localB += r.ChunkBytes
	}
	p.chosen++
	d.stats.fetches++
	d.stats.bytes += r.ChunkBytes
	_, eta := d.pol.(*etaPolicy)
	if hedge {
		d.stats.hedges++
	} else if eta {
		d.watch(r, s)
	}
	a := Action{Kind: Start, Req: r.ID, Shard: s, Peer: r.Peers[s], Hedge: hedge}
	if eta {
		a.Priority = int64(r.K) * r.ChunkBytes
	}
	d.out = append(d.out, a)
}

// Dispatch fills free slots and returns every action decided since the
// last call, appended to buf. Call it after each batch of Submit and Done
// calls, and at NextWake.
func (d *Dispatcher) Dispatch(now time.Duration, buf []Action) []Action {
	switch p := d.pol.(type) {
	case earlyPolicy:
		d.dispatchEarly(now, p)
	case latePolicy:
		d.dispatchLate(now, p)
	}
	if w, ok := d.pol.(*wlcPolicy); ok {
		w.round(d, now)
	}
	buf = append(buf, d.out...)
	clear(d.out)
	d.out = d.out[:0]
	return buf
}

func (d *Dispatcher) dispatchEarly(now time.Duration, p earlyPolicy) {
	var window time.Duration
	if _, batching := p.(*loadPolicy); batching {
		// LOAD's batch is the reads waiting for the pool: they wait while
		// every slot is taken or planned fetches queue for one, and are
		// planned together when the pool can start one of them.
		d.startQueued(now)
		if d.busy >= d.cfg.Slots {
			return
		}
		window = d.cfg.Window
	}
	if len(d.unplan) > 0 && now-d.unplanSince() >= window {
		batch := d.unplan[:0:0]
		for _, r := range d.unplan {
			if !r.planned {
				batch = append(batch, r)
			}
		}
		d.unplan = d.unplan[:0]
		if len(batch) > 0 {
			p.plan(d, batch, now)
		}
		for _, r := range batch {
			r.planned = true
		}
	}
	d.startQueued(now)
}

// startQueued starts planned fetches in FIFO order while slots are free.
func (d *Dispatcher) startQueued(now time.Duration) {
	for d.busy < d.cfg.Slots {
		t, ok := d.fifo.pop()
		if !ok {
			return
		}
		if _, live := d.reqs[t.r.ID]; !live || t.r.state[t.shard] != shQueued {
			continue
		}
		d.start(now, t.r, t.shard, false)
	}
}

func (d *Dispatcher) unplanSince() time.Duration {
	return d.unplan[0].arrival
}

// assign queues shard s of r as a planned fetch.
func (d *Dispatcher) assign(r *reqState, s int) {
	r.state[s] = shQueued
	d.peer(r.Peers[s]).assigned++
	d.fifo.push(task{r: r, shard: s})
}

// NextWake returns when Dispatch must run again even if nothing is
// submitted or done: a batch window closing, a hedge falling due or a
// re-weighting round.
func (d *Dispatcher) NextWake(now time.Duration) (time.Duration, bool) {
	wake, ok := time.Duration(math.MaxInt64), false
	// Reads still unplanned after their window wait for a slot, and a
	// fetch's Done dispatches again.
	if len(d.unplan) > 0 && d.unplanSince()+d.cfg.Window > now {
		wake, ok = d.unplanSince()+d.cfg.Window, true
	}
	if _, isETA := d.pol.(*etaPolicy); isETA {
		if t, has := d.hedgeDue(now); has && t < wake {
			wake, ok = t, true
		}
	}
	if w, isWLC := d.pol.(*wlcPolicy); isWLC && w.cpu && len(d.peers) > 0 {
		if t := w.last + d.cfg.Period; t < wake {
			wake, ok = t, true
		}
	}
	return wake, ok
}

// pick returns up to k idle shard indexes of r in ascending cost order.
func pickK(r *reqState, k int, cost func(s int) float64) []int {
	out := make([]int, 0, k)
	taken := make([]bool, len(r.state))
	for len(out) < k {
		best, bc := -1, math.Inf(1)
		for s := range r.state {
			if taken[s] || !r.idle(s) {
				continue
			}
			if c := cost(s); c < bc || best < 0 {
				best, bc = s, c
			}
		}
		if best < 0 {
			break
		}
		taken[best] = true
		out = append(out, best)
	}
	return out
}

// Abort ends a read its caller gave up on or finished by other means:
// its fetches in flight are cancelled (Cancel actions follow) and it
// leaves the queue without counting as finished or failed. Unknown ids
// are ignored.
func (d *Dispatcher) Abort(now time.Duration, id ReqID) {
	r, ok := d.reqs[id]
	if !ok {
		return
	}
	d.cancelRest(now, r)
	d.drop(r)
}
