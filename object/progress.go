package object

import (
	"context"
	"io"
	"sync"
	"time"
)

// progress watches the shard streams of one write. A stream whose write
// has been blocked for after while at least quorum others still make
// progress is given up: a hung peer stops draining its pipe, and the
// others would soon wait on the encoder it holds back. One blocked for
// limit is given up whatever the others do. When no stream progresses,
// the machine or the network is slow rather than one peer, and nothing
// is given up before limit.
type progress struct {
	after, limit time.Duration
	quorum       int
	now          func() time.Time

	mu    sync.Mutex
	busy  []time.Time // start of the write in progress; zero when none
	dead  []bool
	abort []func(error)
}

func newProgress(n, quorum int, after, limit time.Duration) *progress {
	return &progress{after: after, limit: limit, quorum: quorum, now: time.Now,
		busy: make([]time.Time, n), dead: make([]bool, n), abort: make([]func(error), n)}
}

// writer wraps stream i's writer; abort ends the stream when it is given up.
func (p *progress) writer(i int, w io.Writer, abort func(error)) io.Writer {
	p.mu.Lock()
	p.abort[i] = abort
	p.mu.Unlock()
	return &stallWriter{p: p, i: i, w: w}
}

// watch checks the streams every quarter of after until ctx ends.
func (p *progress) watch(ctx context.Context) {
	t := time.NewTicker(max(p.after/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.check()
		}
	}
}

// check gives up the streams stalled by the rules above, one at a time.
func (p *progress) check() {
	p.mu.Lock()
	var give func(error)
	now := p.now()
	for i, b := range p.busy {
		if p.dead[i] || b.IsZero() || now.Sub(b) < p.after {
			continue
		}
		if now.Sub(b) >= p.limit || p.moving(i, now) >= p.quorum {
			p.dead[i] = true
			give = p.abort[i]
			break
		}
	}
	p.mu.Unlock()
	if give != nil {
		give(errStalled)
	}
}

// moving counts the live streams other than i not blocked for after.
// Caller holds mu.
func (p *progress) moving(i int, now time.Time) int {
	n := 0
	for j, b := range p.busy {
		if j != i && !p.dead[j] && (b.IsZero() || now.Sub(b) < p.after) {
			n++
		}
	}
	return n
}

// gone marks stream i ended for another reason (its peer failed), so it
// no longer counts as moving.
func (p *progress) gone(i int) {
	p.mu.Lock()
	p.dead[i] = true
	p.mu.Unlock()
}

func (p *progress) begin(i int) {
	p.mu.Lock()
	p.busy[i] = p.now()
	p.mu.Unlock()
}

func (p *progress) end(i int) {
	p.mu.Lock()
	p.busy[i] = time.Time{}
	p.mu.Unlock()
}

// stallWriter is one watched stream.
type stallWriter struct {
	p *progress
	i int
	w io.Writer
}

func (s *stallWriter) Write(b []byte) (int, error) {
	s.p.begin(s.i)
	defer s.p.end(s.i)
	return s.w.Write(b)
}
