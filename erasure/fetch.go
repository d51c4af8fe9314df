package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// OpenFunc opens bytes [shardOff, shardOff+shardLen) of shard's file. The
// reader is read sequentially from one goroutine; to abort, Decode and
// Rebuild cancel ctx and may call Close while a Read is in progress (as
// net/http bodies, os.File and io.Pipe allow).
type OpenFunc func(ctx context.Context, shard int, shardOff, shardLen int64) (io.ReadCloser, error)

// DecodeStats reports how a Decode or Rebuild used the shards.
type DecodeStats struct {
	// Bad maps each shard dropped during the call to why (open error, read
	// error, short read, or an error wrapping ErrBitrot). Such shards need
	// repair. Never nil.
	Bad map[int]error
	// Used lists the shards that supplied at least one verified chunk, in
	// order of first use.
	Used []int
}

// readAhead is how many verified blocks one shard reader may hold ahead of
// the consumer: one being consumed, one being read.
const readAhead = 2

type result struct {
	from  *shardReader
	buf   *[]byte
	piece []byte // [crc][chunk] inside *buf
	err   error
}

// shardReader is one goroutine streaming verified pieces of one shard.
type shardReader struct {
	shard   int
	results chan result  // one per block, or a final error
	free    chan *[]byte // buffers the consumer handed back
	mu      sync.Mutex   // guards rc and closed
	rc      io.ReadCloser
	closed  bool
}

// attach records the opened reader, or closes it if abort came first.
func (sr *shardReader) attach(rc io.ReadCloser) bool {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.closed {
		_ = rc.Close() // aborted: nothing was read, nothing to report
		return false
	}
	sr.rc = rc
	return true
}

// close closes the reader once, from whichever side gets there first.
func (sr *shardReader) close() {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if !sr.closed && sr.rc != nil {
		_ = sr.rc.Close() // read-only stream; a close error changes nothing
	}
	sr.closed = true
}

type retry struct {
	shard int
	after int64 // the block that failed its checksum
}

// source hands out, block by block, k verified chunks from the shards in the
// caller's order, replacing a shard that fails by the next one.
type source struct {
	c      *Coder
	ctx    context.Context
	cancel context.CancelFunc
	open   OpenFunc
	size   int64
	last   int64 // last block to read
	end    int64 // shard-file offset where reading stops
	order  []int
	next   int     // index in order of the next shard to try
	retry  []retry // shards dropped for bitrot, to retry after that block
	active []*shardReader
	all    []*shardReader
	held   []result // the current block's buffers
	shards [][]byte // n entries: the current block's verified chunks
	used   []bool
	stats  *DecodeStats
	wg     sync.WaitGroup
}

func (c *Coder) newSource(ctx context.Context, size, first, last int64, order []int, open OpenFunc, stats *DecodeStats) *source {
	s := &source{c: c, open: open, size: size, last: last, end: c.blockEnd(size, last),
		order: order, active: make([]*shardReader, c.k), shards: make([][]byte, c.n),
		used: make([]bool, c.n), stats: stats}
	s.ctx, s.cancel = context.WithCancel(ctx)
	for i := range s.active {
		s.active[i] = s.start(first) // opens in parallel; nil if order is short
	}
	return s
}

// start launches a reader on the next usable shard from block j, or returns
// nil if none is left.
func (s *source) start(j int64) *shardReader {
	shard, ok := s.nextShard(j)
	if !ok {
		return nil
	}
	sr := &shardReader{shard: shard, results: make(chan result, readAhead+1), free: make(chan *[]byte, readAhead)}
	for range min(readAhead, s.last-j+1) {
		sr.free <- getBuf(crcLen + s.c.chunk)
	}
	s.all = append(s.all, sr)
	s.wg.Add(1)
	go s.run(sr, j)
	return sr
}

func (s *source) nextShard(j int64) (int, bool) {
	if s.next < len(s.order) {
		s.next++
		return s.order[s.next-1], true
	}
	for i, r := range s.retry {
		if r.after < j {
			s.retry = append(s.retry[:i], s.retry[i+1:]...)
			return r.shard, true
		}
	}
	return 0, false
}

// run streams sr's shard from block first to s.last. It sends at most one
// result per buffer it owns plus one error, so sends never block.
func (s *source) run(sr *shardReader, first int64) {
	defer s.wg.Done()
	defer close(sr.results)
	off := s.c.blockOff(first)
	rc, err := s.open(s.ctx, sr.shard, off, s.end-off)
	if err == nil && rc == nil {
		err = errors.New("open returned no reader")
	}
	if err != nil {
		sr.results <- result{err: fmt.Errorf("shard %d block %d: open: %w", sr.shard, first, err)}
		return
	}
	if !sr.attach(rc) {
		return
	}
	defer sr.close()
	for j := first; j <= s.last; j++ {
		var buf *[]byte
		select {
		case buf = <-sr.free:
		case <-s.ctx.Done():
			return
		}
		piece := (*buf)[:crcLen+s.c.blockChunk(s.size, j)]
		if err := readPiece(rc, piece, sr.shard, j); err != nil {
			sr.free <- buf
			sr.results <- result{err: err}
			return
		}
		sr.results <- result{from: sr, buf: buf, piece: piece}
	}
}

// block returns the verified chunks of block j: exactly k non-nil entries of
// an n-entry slice, valid until release.
func (s *source) block(j int64) ([][]byte, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, fmt.Errorf("erasure: block %d: %w", j, err)
	}
	clear(s.shards)
	for slot := range s.active {
		if err := s.fill(slot, j); err != nil {
			return nil, err
		}
	}
	return s.shards, nil
}

// fill gets block j's chunk for one slot, replacing failed shards.
func (s *source) fill(slot int, j int64) error {
	for {
		sr := s.active[slot]
		if sr == nil {
			if sr = s.start(j); sr == nil {
				return s.tooFew(j)
			}
			s.active[slot] = sr
		}
		var res result
		var ok bool
		select {
		case res, ok = <-sr.results:
		case <-s.ctx.Done():
			return fmt.Errorf("erasure: block %d: %w", j, s.ctx.Err())
		}
		if !ok { // the reader stopped without a result: only on cancel
			return fmt.Errorf("erasure: block %d: shard %d stopped: %w", j, sr.shard, context.Cause(s.ctx))
		}
		if res.err != nil {
			s.drop(slot, j, res.err)
			continue
		}
		s.held = append(s.held, res)
		s.shards[sr.shard] = res.piece[crcLen:]
		if !s.used[sr.shard] {
			s.used[sr.shard] = true
			s.stats.Used = append(s.stats.Used, sr.shard)
		}
		return nil
	}
}

// drop retires the reader in slot after its error result. The reader has
// exited and main holds none of its buffers, so all of them are in its free
// channel: recycle them now, since a shard may be retried many times.
func (s *source) drop(slot int, j int64, err error) {
	sr := s.active[slot]
	s.active[slot] = nil
	for len(sr.free) > 0 {
		putBuf(<-sr.free)
	}
	shard := sr.shard
	s.stats.Bad[shard] = err
	if errors.Is(err, ErrBitrot) {
		s.retry = append(s.retry, retry{shard: shard, after: j})
	}
}

// release hands the current block's buffers back to their readers.
func (s *source) release() {
	for _, r := range s.held {
		r.from.free <- r.buf // room guaranteed: the buffer came from there
	}
	s.held = s.held[:0]
}

// close stops every reader, waits for them and recycles all buffers.
func (s *source) close() {
	s.release()
	s.cancel()
	for _, sr := range s.all {
		sr.close()
	}
	s.wg.Wait()
	for _, sr := range s.all {
		for r := range sr.results {
			putBuf(r.buf)
		}
		for len(sr.free) > 0 {
			putBuf(<-sr.free)
		}
	}
}

// tooFew reports that block j cannot be read, with every shard's reason.
func (s *source) tooFew(j int64) error {
	bad := make([]int, 0, len(s.stats.Bad))
	for sh := range s.stats.Bad {
		bad = append(bad, sh)
	}
	sort.Ints(bad)
	errs := []error{ErrTooFewShards}
	msgs := make([]string, 0, len(bad))
	for _, sh := range bad {
		errs = append(errs, s.stats.Bad[sh])
		msgs = append(msgs, s.stats.Bad[sh].Error())
	}
	return &decodeError{block: j, need: s.c.k, msg: strings.Join(msgs, "; "), errs: errs}
}

// decodeError wraps ErrTooFewShards and every shard's own error, so callers
// can test for ErrBitrot as well.
type decodeError struct {
	block int64
	need  int
	msg   string
	errs  []error
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("erasure: block %d: fewer than %d usable shards (%s)", e.block, e.need, e.msg)
}

func (e *decodeError) Unwrap() []error { return e.errs }
