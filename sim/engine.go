package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"tessera/meta"
	"tessera/sched"
)

// Event kinds.
const (
	evArrival = iota // a (batch of) GET(s) arrives; a = first request index
	evSetup          // a fetch's setup ends; a = fetch id
	evPeer           // a peer's next transfer completion; a = peer, ver
	evToggle         // background load flips; a = peer
	evMonitor        // the 1-s load monitor samples every peer
	evWake           // a gateway's dispatcher asked to run; a = gateway
	evEnter          // a GET leaves its gateway's front end for the pool; a = request
)

type event struct {
	t    float64
	kind int
	a    int
	ver  uint64
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].kind < h[j].kind
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// xfer is one chunk fetch in the model.
type xfer struct {
	gw, req, shard, peer int
	size                 float64
	rem                  float64 // bytes still to send, once on the peer
	prio                 int64   // sched.Action.Priority; 0 untagged
	key                  float64 // send order among tagged transfers
	onPeer               bool    // past setup and not yet done
	cancelled, done      bool
	direct               bool // outside the pool (Params.MaxPooled)
	id                   int
	begun                float64
	track                func(err error, n int64, dur time.Duration) // the gateway's Tracker
}

func (r *run) release(x *xfer) {
	r.xfers[x.id] = nil
	r.free = append(r.free, x.id)
}

// peerModel is one peer's NIC. Untagged transfers share it by processor
// sharing: each of m gets cap/m. Tagged ones (sched.Action.Priority > 0)
// go in key order, priority + rate x start time in bytes, as a pacing
// peer sends them: the lowest key gets the link, ties share it. A run's
// transfers are all tagged (eta) or all untagged, so which class would
// win between the two is never asked.
type peerModel struct {
	spec    peerSpec
	last    float64
	active  []*xfer
	set     []*xfer // the transfers the link works on: see reset
	ver     uint64
	bgOn    bool
	rng     *rand.Rand
	sent    float64 // bytes sent, background included
	sampled float64 // sent at the last monitor sample
	tps     float64 // monitor: throughput_send over the last second
	cpu     float64
}

func (p *peerModel) capacity() float64 {
	if p.bgOn {
		return p.spec.bw * (1 - bgShare)
	}
	return p.spec.bw
}

func (p *peerModel) advance(now float64) {
	dt := now - p.last
	if dt <= 0 {
		return
	}
	if len(p.active) > 0 {
		set := p.served()
		share := dt * p.capacity() / float64(len(set))
		for _, x := range set {
			x.rem -= share
		}
		p.sent += dt * p.capacity()
	}
	if p.bgOn {
		p.sent += dt * p.spec.bw * bgShare
	}
	p.last = now
}

// served returns the transfers the link works on now.
func (p *peerModel) served() []*xfer { return p.set }

// reset recomputes the served set after the active set changed: the
// tagged transfers of lowest key, else every transfer.
func (p *peerModel) reset() {
	best := math.Inf(1)
	for _, x := range p.active {
		if x.prio > 0 {
			best = min(best, x.key)
		}
	}
	p.set = p.set[:0]
	for _, x := range p.active {
		if math.IsInf(best, 1) || (x.prio > 0 && x.key == best) {
			p.set = append(p.set, x)
		}
	}
}

func (p *peerModel) add(x *xfer) {
	x.onPeer = true
	p.active = append(p.active, x)
	p.reset()
}

func (p *peerModel) remove(x *xfer) {
	if i := slices.Index(p.active, x); i >= 0 {
		p.active = slices.Delete(p.active, i, i+1)
	}
	x.onPeer = false
	p.reset()
}

// gw is one gateway: its own dispatcher over the shared peers.
type gw struct {
	d    *sched.Dispatcher
	wake float64 // scheduled wake time, +Inf if none
}

// run is one simulation in progress.
type run struct {
	p       Params
	w       workload
	ids     []meta.PeerID
	byID    map[meta.PeerID]int
	peers   []peerModel
	gws     []gw
	front   []float64 // per gateway: when its front end is next free
	ev      eventHeap
	now     float64
	xfers   []*xfer        // by id; ids are reused once free
	free    []int          // ids of finished xfers
	active  map[[2]int]int // (req, shard) → xfer
	lat     []float64
	bursts  []int
	moved   float64
	needed  float64
	actions []sched.Action
	failed  int
	// the gateways' own view of the peers, fed by every fetch, and the
	// order their direct reads follow (with Params.MaxPooled only)
	trackers []*sched.Tracker
	orders   []*sched.ETA
	direct   map[int]int // direct read → fetches still running
}

// monitor is the 1-s gossip the policies read.
type monitor struct{ r *run }

func (m monitor) Load(id meta.PeerID) (float64, float64, bool) {
	i, ok := m.r.byID[id]
	if !ok {
		return 0, 0, false
	}
	return m.r.peers[i].tps, m.r.peers[i].cpu, true
}

// LinkRate is each modelled peer's NIC speed, as a peer gossips it; the
// background load on it is not announced.
func (m monitor) LinkRate(id meta.PeerID) (float64, bool) {
	i, ok := m.r.byID[id]
	if !ok {
		return 0, false
	}
	return m.r.peers[i].spec.bw, true
}

// Result is one run's outcome.
type Result struct {
	Latencies []float64 // seconds, one per finished GET
	Bursts    []int     // the burst of each latency: GET i is in burst i / p
	Moved     float64   // bytes transferred, cancelled partial transfers included
	Needed    float64   // bytes strictly needed: k chunks per GET
	Hedges    uint64
	Failed    int
}

// Run simulates one policy on the workload of p.
func Run(policy string, p Params) (Result, error) {
	return runOn(policy, p, generate(p))
}

func runOn(policy string, p Params, w workload) (Result, error) {
	r := &run{p: p, w: w, byID: make(map[meta.PeerID]int, p.Peers), active: make(map[[2]int]int)}
	r.ids = make([]meta.PeerID, p.Peers)
	r.peers = make([]peerModel, p.Peers)
	for i := range r.ids {
		r.ids[i] = meta.PeerID("p" + strconv.Itoa(i))
		r.byID[r.ids[i]] = i
		r.peers[i] = peerModel{spec: w.peers[i], rng: rand.New(rand.NewPCG(w.peers[i].seed, 7))}
		if w.peers[i].bg {
			r.push(event{t: r.peers[i].rng.ExpFloat64() * bgOnHold * (1 - bgOnFrac) / bgOnFrac, kind: evToggle, a: i})
		}
	}
	for g := range max(p.Gateways, 1) {
		d, err := sched.NewDispatcher(policy, sched.Config{
			Slots: p.Slots, Gateways: max(p.Gateways, 1), NominalBW: p.PeerBW, Setup: p.Setup,
			Load: monitor{r}, Seed: p.Seed*31 + uint64(g),
		})
		if err != nil {
			return Result{}, fmt.Errorf("sim: %w", err)
		}
		r.gws = append(r.gws, gw{d: d, wake: math.Inf(1)})
		if p.Objects > 0 && p.MaxPooled > 0 {
			t := sched.NewTracker(sched.DefaultTrackerConfig())
			r.trackers, r.orders = append(r.trackers, t), append(r.orders, sched.NewETA(t, sched.ETAConfig{}))
		}
	}
	r.direct = map[int]int{}
	r.front = make([]float64, len(r.gws))
	if len(w.reqs) > 0 {
		r.push(event{t: w.reqs[0].at, kind: evArrival, a: 0})
	}
	r.push(event{t: 1, kind: evMonitor})
	var hedges uint64
	r.loop()
	for _, g := range r.gws {
		hedges += g.d.Hedges()
	}
	return Result{Latencies: r.lat, Bursts: r.bursts, Moved: r.moved, Needed: r.needed, Hedges: hedges, Failed: r.failed}, nil
}

func (r *run) push(e event) { heap.Push(&r.ev, e) }

func (r *run) loop() {
	finished := 0
	for r.ev.Len() > 0 && finished < len(r.w.reqs) {
		e := heap.Pop(&r.ev).(event)
		r.now = e.t
		switch e.kind {
		case evArrival:
			r.arrive(e.a)
		case evSetup:
			r.setupDone(e.a)
		case evPeer:
			r.peerDone(e.a, e.ver)
		case evToggle:
			r.toggle(e.a)
		case evMonitor:
			r.sample()
		case evWake:
			r.gws[e.a].wake = math.Inf(1)
			r.dispatch(e.a)
		case evEnter:
			r.dispatch(r.submit(e.a))
		}
		finished = len(r.lat) + r.failed
	}
}

func (r *run) dur() time.Duration { return time.Duration(r.now * float64(time.Second)) }

// arrive submits every GET arriving at this instant, then dispatches;
// with a front end, each GET instead queues there first.
func (r *run) arrive(i int) {
	t := r.w.reqs[i].at
	touched := make([]bool, len(r.gws))
	for ; i < len(r.w.reqs) && r.w.reqs[i].at == t; i++ {
		if r.p.Frontend > 0 {
			g := r.w.reqs[i].gw
			r.front[g] = max(r.front[g], r.now) + r.p.Frontend.Seconds()
			r.push(event{t: r.front[g], kind: evEnter, a: i})
			continue
		}
		touched[r.submit(i)] = true
	}
	if i < len(r.w.reqs) {
		r.push(event{t: r.w.reqs[i].at, kind: evArrival, a: i})
	}
	for g, ok := range touched {
		if ok {
			r.dispatch(g)
		}
	}
}

// submit hands GET i to its gateway's dispatcher and returns the gateway.
func (r *run) submit(i int) int {
	q := &r.w.reqs[i]
	peers := make([]meta.PeerID, q.n)
	for s, pi := range q.peers {
		peers[s] = r.ids[pi]
	}
	chunk := (q.size + int64(q.k) - 1) / int64(q.k)
	if r.p.Objects > 0 && r.p.InlineLimit > 0 && q.size <= r.p.InlineLimit {
		r.finish(i)
		return q.gw
	}
	r.needed += float64(chunk) * float64(q.k)
	if r.p.Objects > 0 && r.p.MaxPooled > 0 && chunk > r.p.MaxPooled {
		r.readDirect(i, peers, chunk)
		return q.gw
	}
	if err := r.gws[q.gw].d.Submit(r.dur(), sched.Request{ID: sched.ReqID(i), Peers: peers, K: q.k, ChunkBytes: chunk}); err != nil {
		panic(err) // ids are indexes: a duplicate is a bug here
	}
	return q.gw
}

// dispatch runs gateway g's dispatcher and carries out its actions.
func (r *run) dispatch(g int) {
	d := r.gws[g].d
	r.actions = d.Dispatch(r.dur(), r.actions[:0])
	for _, a := range r.actions {
		switch a.Kind {
		case sched.Start:
			r.start(g, a)
		case sched.Cancel:
			r.cancel(int(a.Req), a.Shard)
		case sched.Finish:
			r.finish(int(a.Req))
		case sched.Fail:
			r.failed++
		}
	}
	if t, ok := d.NextWake(r.dur()); ok {
		at := t.Seconds()
		if at > r.now && at < r.gws[g].wake {
			r.gws[g].wake = at
			r.push(event{t: at, kind: evWake, a: g})
		}
	}
}

// finish records GET i's latency.
func (r *run) finish(i int) {
	r.lat = append(r.lat, r.now-r.w.reqs[i].at)
	r.bursts = append(r.bursts, i/r.p.Burst)
}

// readDirect starts GET i's k fetches outside the pool, from the holders
// its gateway's ETA order puts first, untagged, as the gateway streams a
// read whose chunks are too large for the pool.
func (r *run) readDirect(i int, peers []meta.PeerID, chunk int64) {
	q := &r.w.reqs[i]
	order := r.orders[q.gw].Order(peers, q.k, chunk)
	for _, s := range order[:q.k] {
		x := r.newXfer(q.gw, i, s, chunk)
		x.direct = true
	}
	r.direct[i] = q.k
}

func (r *run) start(g int, a sched.Action) {
	q := &r.w.reqs[a.Req]
	x := r.newXfer(g, int(a.Req), a.Shard, (q.size+int64(q.k)-1)/int64(q.k))
	if !r.p.NoPeerOrder {
		x.prio = a.Priority
	}
}

// newXfer starts shard's fetch for GET req through gateway g: its setup
// now, then the peer's link.
func (r *run) newXfer(g, req, shard int, chunk int64) *xfer {
	q := &r.w.reqs[req]
	x := &xfer{gw: g, req: req, shard: shard, peer: q.peers[shard], size: float64(chunk), id: -1, begun: r.now}
	x.track = untracked
	if r.trackers != nil {
		x.track = r.trackers[g].Begin(r.ids[x.peer], chunk)
	}
	id := len(r.xfers)
	if n := len(r.free); n > 0 {
		id = r.free[n-1]
		r.free = r.free[:n-1]
		r.xfers[id] = x
	} else {
		r.xfers = append(r.xfers, x)
	}
	x.id = id
	r.active[[2]int{req, shard}] = id
	r.push(event{t: r.now + r.p.Setup.Seconds(), kind: evSetup, a: id})
	return x
}

// untracked ends a fetch no Tracker follows (no direct reads to order).
func untracked(error, int64, time.Duration) {}

// since is how long x has run, for its Tracker.
func (r *run) since(x *xfer) time.Duration {
	return time.Duration((r.now - x.begun) * float64(time.Second))
}

func (r *run) setupDone(id int) {
	x := r.xfers[id]
	if x.cancelled {
		r.release(x)
		return
	}
	p := &r.peers[x.peer]
	p.advance(r.now)
	x.rem = x.size
	x.key = float64(x.prio) + sched.PeerAging*p.spec.bw*r.now
	p.add(x)
	r.reschedule(x.peer)
}

func (r *run) cancel(req, shard int) {
	key := [2]int{req, shard}
	id, ok := r.active[key]
	if !ok {
		return
	}
	delete(r.active, key)
	x := r.xfers[id]
	x.cancelled = true
	x.track(context.Canceled, 0, r.since(x)) // says nothing of the peer
	if !x.onPeer {
		return // still in setup: setupDone releases it
	}
	defer r.release(x)
	p := &r.peers[x.peer]
	p.advance(r.now)
	r.moved += x.size - max(x.rem, 0)
	p.remove(x)
	r.reschedule(x.peer)
}

// reschedule posts the peer's next completion under a new version.
func (r *run) reschedule(pi int) {
	p := &r.peers[pi]
	p.ver++
	if len(p.active) == 0 {
		return
	}
	set := p.served()
	left := math.Inf(1)
	for _, x := range set {
		left = min(left, x.rem)
	}
	r.push(event{t: r.now + max(left, 0)*float64(len(set))/p.capacity(), kind: evPeer, a: pi, ver: p.ver})
}

const vEps = 1e-3 // bytes: completions this close count as simultaneous

func (r *run) peerDone(pi int, ver uint64) {
	p := &r.peers[pi]
	if ver != p.ver {
		return
	}
	p.advance(r.now)
	var done []*xfer
	for _, x := range p.served() {
		if x.rem <= vEps {
			done = append(done, x)
		}
	}
	for _, x := range done {
		p.remove(x)
	}
	r.reschedule(pi)
	touched := map[int]bool{}
	for _, x := range done {
		x.done = true
		delete(r.active, [2]int{x.req, x.shard})
		r.moved += x.size
		x.track(nil, int64(x.size), r.since(x))
		r.release(x)
		if x.direct {
			if r.direct[x.req]--; r.direct[x.req] == 0 {
				delete(r.direct, x.req)
				r.finish(x.req)
			}
			continue
		}
		r.gws[x.gw].d.Done(r.dur(), sched.ReqID(x.req), x.shard, nil, int64(x.size))
		touched[x.gw] = true
	}
	for g := range r.gws {
		if touched[g] {
			r.dispatch(g)
		}
	}
}

func (r *run) toggle(pi int) {
	p := &r.peers[pi]
	p.advance(r.now)
	p.bgOn = !p.bgOn
	hold := bgOnHold
	if !p.bgOn {
		hold = bgOnHold * (1 - bgOnFrac) / bgOnFrac
	}
	r.push(event{t: r.now + p.rng.ExpFloat64()*hold, kind: evToggle, a: pi})
	r.reschedule(pi)
}

func (r *run) sample() {
	for i := range r.peers {
		p := &r.peers[i]
		p.advance(r.now)
		p.tps = p.sent - p.sampled
		p.sampled = p.sent
		// CPU follows the bytes sent at one cost per byte on every host,
		// as on real peers: a slow NIC sends less and so burns less CPU,
		// it does not look busy.
		p.cpu = min(p.tps/r.p.PeerBW, 1)
	}
	if r.p.OneHost {
		var sum float64
		for i := range r.peers {
			sum += r.peers[i].cpu
		}
		for i := range r.peers {
			r.peers[i].cpu = sum / float64(len(r.peers))
		}
	}
	r.push(event{t: r.now + 1, kind: evMonitor})
}
