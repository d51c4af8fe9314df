package object

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"tessera/meta"
	"tessera/sched"
)

// errPoolGaveUp reports that the scheduler could not find k usable
// holders; the read submits again with the holders it doubted allowed
// back in (fetchWindow), so the policy also picks the last resorts.
var errPoolGaveUp = errors.New("fetch pool: too few usable holders")

// FetchPool is a gateway's bounded pool of shard fetches (the paper's L
// download threads) run by a sched.Dispatcher: a read waits in it until
// the policy grants it k shard fetches, each granted when a slot frees.
// It is the concurrent shell around the pure dispatcher: every call into
// the dispatcher holds mu. Safe for concurrent use.
type FetchPool struct {
	mu     sync.Mutex
	cfg    sched.Config
	d      *sched.Dispatcher
	epoch  time.Time
	next   sched.ReqID
	reads  map[sched.ReqID]*poolRead
	timer  *time.Timer
	wakeAt time.Duration
	closed bool
	buf    []sched.Action
}

// poolRead is one read's mailbox.
type poolRead struct {
	d     *sched.Dispatcher // the dispatcher that owns it (policies may change)
	acts  chan sched.Action // Start and Cancel; room for every possible one
	end   chan struct{}     // closed at Finish, Fail or abort
	ended bool
	fail  bool
}

// NewFetchPool returns a pool running the named policy; cfg.Slots is L.
func NewFetchPool(policy string, cfg sched.Config) (*FetchPool, error) {
	d, err := sched.NewDispatcher(policy, cfg)
	if err != nil {
		return nil, err
	}
	return &FetchPool{cfg: cfg, d: d, epoch: time.Now(), reads: map[sched.ReqID]*poolRead{}}, nil
}

// SetPolicy switches the policy for reads submitted from now on; reads
// already waiting finish under the old one (for a moment both pools may
// each have L fetches running).
func (p *FetchPool) SetPolicy(name string) error {
	d, err := sched.NewDispatcher(name, p.cfg)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.d = d
	p.mu.Unlock()
	return nil
}

// Policy returns the policy new reads get.
func (p *FetchPool) Policy() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.d.Policy()
}

// Status returns the current dispatcher's figures.
func (p *FetchPool) Status() sched.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.d.Status()
}

// Close stops the pool's timer.
func (p *FetchPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *FetchPool) now() time.Duration { return time.Since(p.epoch) }

// submit queues a read. Call with no lock held.
func (p *FetchPool) submit(peers []meta.PeerID, k int, chunk int64) (sched.ReqID, *poolRead) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := p.next
	r := &poolRead{d: p.d, acts: make(chan sched.Action, 2*len(peers)+2), end: make(chan struct{})}
	p.reads[id] = r
	now := p.now()
	if err := p.d.Submit(now, sched.Request{ID: id, Peers: peers, K: k, ChunkBytes: chunk}); err != nil {
		// ids are unique per pool; a duplicate is impossible
		panic(fmt.Sprintf("fetch pool: %v", err))
	}
	p.dispatch(r.d, now)
	return id, r
}

// done reports one fetch's end.
func (p *FetchPool) done(id sched.ReqID, r *poolRead, shard int, err error, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r.d.Done(now, id, shard, err, n)
	p.dispatch(r.d, now)
}

// abort ends a read whatever its state.
func (p *FetchPool) abort(id sched.ReqID, r *poolRead) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	r.d.Abort(now, id)
	p.endRead(id, r, false)
	p.dispatch(r.d, now)
}

// dispatch runs d and delivers its actions. Caller holds mu.
func (p *FetchPool) dispatch(d *sched.Dispatcher, now time.Duration) {
	p.buf = d.Dispatch(now, p.buf[:0])
	for _, a := range p.buf {
		r, ok := p.reads[a.Req]
		if !ok {
			continue
		}
		switch a.Kind {
		case sched.Start, sched.Cancel:
			r.acts <- a // sized for every action a read can receive
		case sched.Finish:
			p.endRead(a.Req, r, false)
		case sched.Fail:
			p.endRead(a.Req, r, true)
		}
	}
	if d == p.d {
		p.arm(d, now)
	}
}

func (p *FetchPool) endRead(id sched.ReqID, r *poolRead, fail bool) {
	if !r.ended {
		r.ended, r.fail = true, fail
		close(r.end)
	}
	delete(p.reads, id)
}

// arm sets the timer for the dispatcher's next wake. Caller holds mu.
func (p *FetchPool) arm(d *sched.Dispatcher, now time.Duration) {
	at, ok := d.NextWake(now)
	if !ok || p.closed || (p.timer != nil && p.wakeAt > now && p.wakeAt <= at) {
		return
	}
	p.wakeAt = at
	delay := max(at-now, time.Millisecond)
	if p.timer == nil {
		p.timer = time.AfterFunc(delay, p.wake)
		return
	}
	p.timer.Reset(delay)
}

func (p *FetchPool) wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeAt = 0
	p.dispatch(p.d, p.now())
}

// await runs read r to its end: it calls start for each fetch the pool
// grants (the fetch must report back with done) and cancel for each it
// withdraws, until the pool finishes the read (k fetches succeeded),
// fails it (errPoolGaveUp) or ctx ends.
func (p *FetchPool) await(ctx context.Context, r *poolRead, start func(sched.Action), cancel func(shard int)) error {
	for {
		select {
		case a := <-r.acts:
			p.act(a, start, cancel)
		case <-r.end:
			for {
				select {
				case a := <-r.acts:
					p.act(a, start, cancel)
				default:
					if r.fail {
						return errPoolGaveUp
					}
					return nil
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *FetchPool) act(a sched.Action, start func(sched.Action), cancel func(int)) {
	switch a.Kind {
	case sched.Start:
		start(a)
	case sched.Cancel:
		cancel(a.Shard)
	}
}
