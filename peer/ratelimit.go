package peer

import (
	"container/heap"
	"context"
	"io"
	"sync"
	"time"

	"tessera/sched"
)

// SendLimit emulates a slower NIC and disk on one host: a link of Rate
// bytes/s shared by every shard stream the peer sends and a fixed Delay
// before each stream's first byte (seek and request handling). Zero
// fields disable each part.
//
// The link is also where the peer orders its sends: streams tagged with
// a read priority (the size of the read they serve, sched.Action.Priority)
// go smallest first, aged by sched.PeerAging; untagged streams take turns
// slice by slice, as on a plain NIC, and while tagged ones wait they
// still get one slice in plainEvery, so repairs and reads of unknown size
// never stall. An unpaced peer leaves the order to the kernel.
type SendLimit struct {
	Rate  float64       // bytes per second; 0 unlimited
	Delay time.Duration // per shard stream
}

// sendBurst is the slice one grant covers: small enough to keep the rate
// smooth and the order responsive at millisecond scale, large enough for
// one write of io.Copy's buffer.
const sendBurst = 64 << 10

// plainEvery: when both kinds of stream wait, every plainEvery-th slice
// goes to an untagged one.
const plainEvery = 10

// link is a paced send queue. Waiting slices of tagged streams go in key
// order, untagged ones in arrival order; the head is granted once the
// link has sent what was granted before it, less one slice of credit for
// idle time (a token bucket of depth sendBurst). Safe for concurrent use.
type link struct {
	mu     sync.Mutex
	rate   float64
	free   time.Time // when everything granted so far has been sent
	epoch  time.Time
	tagged waitQueue
	plain  waitQueue
	run    int // tagged grants in a row while untagged slices waited
	seq    uint64
	now    func() time.Time
}

func newLink(rate float64, now func() time.Time) *link {
	t := now()
	return &link{rate: rate, free: t, epoch: t, now: now}
}

// key orders a tagged stream's slices: its priority plus its aged start,
// in bytes.
func (l *link) key(prio int64, start time.Time) float64 {
	return float64(prio) + sched.PeerAging*l.rate*start.Sub(l.epoch).Seconds()
}

// head is the waiter to serve next, nil if none. Caller holds mu.
func (l *link) head() *waiter {
	switch {
	case len(l.plain) > 0 && (len(l.tagged) == 0 || l.run >= plainEvery-1):
		return l.plain[0]
	case len(l.tagged) > 0:
		return l.tagged[0]
	}
	return nil
}

func (l *link) queue(w *waiter) *waitQueue {
	if w.tagged {
		return &l.tagged
	}
	return &l.plain
}

// send waits until n bytes of a stream with priority prio (0: untagged)
// that began at start may go, or ctx ends.
func (l *link) send(ctx context.Context, prio int64, start time.Time, n int) error {
	l.mu.Lock()
	w := &waiter{tagged: prio > 0, seq: l.seq, wake: make(chan struct{}, 1)}
	if w.tagged {
		w.key = l.key(prio, start)
	}
	l.seq++
	heap.Push(l.queue(w), w)
	for {
		var wait time.Duration
		if l.head() == w {
			now := l.now()
			if wait = l.free.Sub(now); wait <= 0 {
				heap.Pop(l.queue(w))
				switch {
				case !w.tagged:
					l.run = 0
				case len(l.plain) > 0:
					l.run++
				}
				credit := now.Add(-time.Duration(float64(sendBurst) / l.rate * float64(time.Second)))
				if l.free.Before(credit) {
					l.free = credit
				}
				l.free = l.free.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
				l.wakeHead()
				l.mu.Unlock()
				return nil
			}
		}
		l.mu.Unlock()
		if err := w.sleep(ctx, wait); err != nil {
			l.mu.Lock()
			heap.Remove(l.queue(w), w.idx)
			l.wakeHead() // w may have been the head, or kept an untagged turn
			l.mu.Unlock()
			return err
		}
		l.mu.Lock()
	}
}

// wakeHead tells the waiter now at the head to look again. Caller holds mu.
func (l *link) wakeHead() {
	if h := l.head(); h != nil {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// waiter is one slice waiting for the link.
type waiter struct {
	tagged bool
	key    float64 // tagged: see key; untagged: 0, so seq orders them
	seq    uint64
	idx    int
	wake   chan struct{}
}

// sleep waits for d (forever when d is 0: until woken), a wake-up or
// ctx's end.
func (w *waiter) sleep(ctx context.Context, d time.Duration) error {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
	case <-w.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

type waitQueue []*waiter

func (q waitQueue) Len() int { return len(q) }
func (q waitQueue) Less(i, j int) bool {
	if q[i].key != q[j].key {
		return q[i].key < q[j].key
	}
	return q[i].seq < q[j].seq
}
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].idx, q[j].idx = i, j
}
func (q *waitQueue) Push(x any) {
	w := x.(*waiter)
	w.idx = len(*q)
	*q = append(*q, w)
}
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return w
}

// limitedWriter paces one stream's writes through the link, in slices of
// at most sendBurst bytes, giving up when ctx ends.
type limitedWriter struct {
	ctx   context.Context
	w     io.Writer
	l     *link
	prio  int64
	start time.Time
}

func (lw *limitedWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), sendBurst)
		if err := lw.l.send(lw.ctx, lw.prio, lw.start, n); err != nil {
			return written, err
		}
		m, err := lw.w.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sendPacer applies a SendLimit to shard streams.
type sendPacer struct {
	limit SendLimit
	l     *link
}

func newSendPacer(l SendLimit) *sendPacer {
	p := &sendPacer{limit: l}
	if l.Rate > 0 {
		p.l = newLink(l.Rate, time.Now)
	}
	return p
}

// writer returns w paced by the limit, after the per-stream delay, for a
// stream of read priority prio (0: untagged).
func (p *sendPacer) writer(ctx context.Context, w io.Writer, prio int64) (io.Writer, error) {
	if p == nil {
		return w, nil
	}
	if err := sleep(ctx, p.limit.Delay); err != nil {
		return nil, err
	}
	if p.l == nil {
		return w, nil
	}
	return &limitedWriter{ctx: ctx, w: w, l: p.l, prio: prio, start: p.l.now()}, nil
}
