package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// writeQueue is how many stripes may wait for one writer. Two lets the
// next block be read and encoded while every writer still has one queued,
// and bounds Encode's memory at writeQueue+2 stripes.
const writeQueue = 2

var errNoWriter = errors.New("erasure: no writer for shard")

// stripe is one encoded block shared by the n writer goroutines; the last
// one to finish with it recycles the buffer.
type stripe struct {
	buf   *[]byte
	block int64
	cs    int // chunk length of this block
	refs  atomic.Int32
}

func (s *stripe) piece(i int) []byte {
	stride := crcLen + s.cs
	return (*s.buf)[i*stride : (i+1)*stride]
}

func (s *stripe) release() {
	if s.refs.Add(-1) == 0 {
		putBuf(s.buf)
	}
}

// fanout runs one goroutine per writer so a slow writer only delays the
// others once its queue is full, and the reader never waits for a write.
type fanout struct {
	queues  []chan *stripe // nil where the writer is nil
	started int
	failed  atomic.Int32
	wg      sync.WaitGroup
}

func startFanout(ctx context.Context, w []io.Writer, errs []error) *fanout {
	f := &fanout{queues: make([]chan *stripe, len(w))}
	for i, wi := range w {
		if wi == nil {
			errs[i] = errNoWriter
			continue
		}
		q := make(chan *stripe, writeQueue)
		f.queues[i] = q
		f.started++
		f.wg.Add(1)
		go f.run(ctx, i, wi, q, &errs[i])
	}
	return f
}

// run writes shard i's piece of every stripe. After a failure it keeps
// draining its queue, so the producer never blocks on a dead writer.
func (f *fanout) run(ctx context.Context, i int, w io.Writer, q <-chan *stripe, errp *error) {
	defer f.wg.Done()
	dead := false
	for s := range q {
		if !dead && ctx.Err() == nil {
			piece := s.piece(i)
			seal(piece, i, s.block) // here, so checksums run in parallel
			if err := writeFull(w, piece); err != nil {
				*errp = fmt.Errorf("erasure: write shard %d block %d: %w", i, s.block, err)
				dead = true
				f.failed.Add(1)
			}
		}
		s.release()
	}
}

func (f *fanout) live() int { return f.started - int(f.failed.Load()) }

// send queues s for every writer, dead ones included (they just release it).
func (f *fanout) send(ctx context.Context, s *stripe) error {
	s.refs.Store(int32(f.started))
	sent := 0
	for _, q := range f.queues {
		if q == nil {
			continue
		}
		select {
		case q <- s:
			sent++
		case <-ctx.Done():
			for ; sent < f.started; sent++ {
				s.release()
			}
			return ctx.Err()
		}
	}
	return nil
}

// stop closes the queues and waits for every writer to finish.
func (f *fanout) stop() {
	for _, q := range f.queues {
		if q != nil {
			close(q)
		}
	}
	f.wg.Wait()
}

// Encode reads r to io.EOF and writes shard i's file to w[i]. A nil w[i] is
// treated as a writer that failed before the first byte.
//
// Each writer gets its own goroutine and a queue of writeQueue blocks, so a
// slow writer does not serialize the others and reading the next block
// overlaps with writing. A writer that returns an error is dropped, its
// error kept in errs[i]; encoding continues while at least quorum writers
// remain (quorum is raised to k if lower, since fewer shards could not be
// decoded), else it stops with an error wrapping ErrTooFewShards. A read
// error from r aborts with that error wrapped. A cancelled ctx stops the
// encode; writers should themselves unblock when ctx is done, since Encode
// waits for them. errs[i] is nil exactly when shard i was written in full
// (on success). n is the number of bytes read from r. Every goroutine has
// exited when Encode returns.
func (c *Coder) Encode(ctx context.Context, r io.Reader, w []io.Writer, quorum int) (n int64, errs []error, err error) {
	if len(w) != c.n {
		return 0, nil, fmt.Errorf("erasure: encode: %d writers for %d shards", len(w), c.n)
	}
	quorum = max(quorum, c.k)
	if quorum > c.n {
		return 0, nil, fmt.Errorf("erasure: encode: quorum %d above %d shards", quorum, c.n)
	}
	errs = make([]error, c.n)
	f := startFanout(ctx, w, errs)
	n, err = c.pump(ctx, r, f, quorum)
	f.stop()
	if live := f.live(); err == nil && live < quorum {
		err = fmt.Errorf("erasure: encode: %d writers left, quorum %d: %w", live, quorum, ErrTooFewShards)
	}
	return n, errs, err
}

// pump reads, encodes and queues blocks until r ends or something fails.
func (c *Coder) pump(ctx context.Context, r io.Reader, f *fanout, quorum int) (int64, error) {
	var n int64
	shards := make([][]byte, c.n)
	for j := int64(0); ; j++ {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("erasure: encode: %w", err)
		}
		if live := f.live(); live < quorum {
			return n, fmt.Errorf("erasure: encode block %d: %d writers left, quorum %d: %w", j, live, quorum, ErrTooFewShards)
		}
		buf := getBuf(c.n * (crcLen + c.chunk))
		l, eof, err := c.fill(r, *buf)
		n += int64(l)
		if err != nil || l == 0 {
			putBuf(buf)
			if err != nil {
				return n, fmt.Errorf("erasure: encode: read block %d: %w", j, err)
			}
			return n, nil
		}
		s := &stripe{buf: buf, block: j, cs: c.layout(*buf, l)}
		chunks(shards, *buf, s.cs)
		if err := c.parity(shards); err != nil {
			putBuf(buf)
			return n, err
		}
		if err := f.send(ctx, s); err != nil {
			return n, fmt.Errorf("erasure: encode: %w", err)
		}
		if eof {
			return n, nil
		}
	}
}

// writeFull writes p to w, turning a short write without error into one.
func writeFull(w io.Writer, p []byte) error {
	n, err := w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}
