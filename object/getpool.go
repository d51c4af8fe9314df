package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"tessera/erasure"
	"tessera/meta"
	"tessera/sched"
)

// MaxPooledShard is the default Config.FetchWindow: the largest shard
// range one pooled fetch downloads. A pooled fetch is a whole chunk
// downloaded into memory, so that it frees its slot when done whatever
// the other shards of its read do (holding slots until a whole read could
// go on would let reads that each hold part of the pool wait on each
// other forever). A part whose shard range is larger is read as windows
// of at most half this much per shard, each its own read in the pool, so
// the policy decides every fetch while a GET holds at most two windows in
// memory (see windows and readPart). 4 MiB reads every chunk of the
// workloads the scheduler is tuned for (99% of objects under 16 MB at
// k ≥ 4) in one window.
const MaxPooledShard = 4 << 20

// window is one pooled read of a part: part bytes [off, off+length),
// held in bytes [shardOff, shardOff+shardLen) of every shard file, each
// downloaded into a buffer of bufCap bytes.
type window struct {
	off, length        int64
	shardOff, shardLen int64
	bufCap             int64
}

// windows splits part bytes [off, off+length) into windows of whole
// blocks. A range whose shard range fits in limit bytes is one window;
// a larger one is cut into windows of at most limit/2 (or one block where
// a block's chunk alone is larger), because readPart holds two of them at
// a time: a streaming GET then holds k x limit like a single pooled read.
// Windows start at multiples of their span from the part's start, so no
// block is read by two of them.
func windows(ec *erasure.Coder, size, off, length, limit int64) []window {
	if _, sl := ec.ShardRange(size, off, length); sl > limit {
		limit /= 2
	}
	bs := int64(ec.BlockSize())
	_, perBlock := ec.ShardRange(size, 0, bs) // the first block is the largest
	span := max(1, limit/max(perBlock, 1)) * bs
	var out []window
	for o, end := off, off+length; o < end; {
		next := min((o/span+1)*span, end)
		so, sl := ec.ShardRange(size, o, next-o)
		out = append(out, window{off: o, length: next - o, shardOff: so, shardLen: sl})
		o = next
	}
	// Every window of a read takes buffers of one size, its largest
	// window's, so that a read's last, shorter window reuses the buffers
	// its others leave idle instead of making others of a smaller class.
	var most int64
	for _, w := range out {
		most = max(most, w.shardLen)
	}
	for i := range out {
		out[i].bufCap = chunkCap(most)
	}
	return out
}

// fetchFunc fills dst with bytes [off, off+len(dst)) of a shard, whole
// and verified. n is the bytes that crossed the network, which the pool's
// goodput estimates count: 0 for bytes already in memory.
type fetchFunc func(ctx context.Context, shard int, off int64, dst []byte) (n int64, err error)

// fetcher returns the source of part p's chunks: the shard files on the
// peers, or for an inlined object the records that carry them.
func (l *Layer) fetcher(v *version, ec *erasure.Coder, p meta.Part) fetchFunc {
	if v.obj.Inlined {
		return func(ctx context.Context, shard int, off int64, dst []byte) (int64, error) {
			return l.fetchInline(ctx, v, ec, shard, off, dst)
		}
	}
	open := l.opener(v, p.Number)
	return func(ctx context.Context, shard int, off int64, dst []byte) (int64, error) {
		n, err := fetchChunk(ctx, open, shard, off, dst)
		if err == nil {
			err = ec.VerifyRange(p.Size, off, shard, dst)
		}
		return n, err
	}
}

// fetchChunk downloads a shard range whole into dst.
func fetchChunk(ctx context.Context, open erasure.OpenFunc, shard int, off int64, dst []byte) (int64, error) {
	rc, err := open(ctx, shard, off, int64(len(dst)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, dst)
	if err != nil {
		return int64(n), fmt.Errorf("read shard %d: got %d of %d bytes: %w", shard, n, len(dst), err)
	}
	return int64(n), nil
}

// fetchInline serves a shard range of an inlined object from the record
// the metadata read already holds, or else from the record read again
// from the shard's peer. Either way the policy granted the fetch, so an
// inlined GET is decided and counted like any other.
func (l *Layer) fetchInline(ctx context.Context, v *version, ec *erasure.Coder, shard int, off int64, dst []byte) (int64, error) {
	data, fromPeer, err := l.inlineBytes(ctx, v, shard, off, int64(len(dst)))
	var n int64
	if fromPeer {
		n = int64(len(dst))
	}
	if err != nil {
		return n, err
	}
	copy(dst, data)
	if err := ec.VerifyRange(v.obj.Size, off, shard, dst); err != nil {
		return n, fmt.Errorf("inline shard %d from %s: %w", shard, v.obj.Distribution[shard], err)
	}
	return n, nil
}

// openInline is fetchInline's bytes as a stream, unverified (the decoder
// verifies them), for a rebuild from inlined records.
func (l *Layer) openInline(ctx context.Context, v *version, shard int, off, length int64) (io.ReadCloser, error) {
	data, _, err := l.inlineBytes(ctx, v, shard, off, length)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// inlineBytes returns a shard range of an inlined object from the record
// at hand, or else from the shard peer's record (fromPeer).
func (l *Layer) inlineBytes(ctx context.Context, v *version, shard int, off, length int64) (data []byte, fromPeer bool, err error) {
	rec := v.holders[shard]
	if rec == nil {
		if rec, err = l.inlineRecord(ctx, v, shard); err != nil {
			return nil, false, err
		}
		fromPeer = true
	}
	if off < 0 || length < 0 || off+length > int64(len(rec.Inline)) {
		return nil, fromPeer, fmt.Errorf("inline shard %d: range %d+%d of %d bytes", shard, off, length, len(rec.Inline))
	}
	return rec.Inline[off : off+length], fromPeer, nil
}

// inlineRecord reads shard's record of v from its peer, which the
// metadata read did not see holding it.
func (l *Layer) inlineRecord(ctx context.Context, v *version, shard int) (*meta.Object, error) {
	o := v.obj
	peer := o.Distribution[shard]
	a := l.readVersions(ctx, peer, o.Bucket, o.Key)
	r, err := a.copyOf(o.Stamp, shard), a.err
	if err == nil && r == nil {
		err = fmt.Errorf("holds version %s, want %s", a.obj.Stamp, o.Stamp)
	}
	if err != nil {
		return nil, fmt.Errorf("inline shard %d from %s: %w", shard, peer, err)
	}
	return r, nil
}

// fetchWindow gathers at least k verified chunks of win through the
// pool, by shard, and the shards whose fetch failed. The first round
// offers the policy the holders this read trusts; when the pool gives up
// on them (too few delivered), a second round offers every holder not
// tried yet, the doubtful ones included. The policy thus chooses every
// fetch, the last resorts too, where a fixed order used to.
func (l *Layer) fetchWindow(ctx context.Context, v *version, win window, fetch fetchFunc, wc *windowChunks) error {
	k := v.obj.Code.K
	for _, lenient := range []bool{false, true} {
		need := k - countChunks(wc.got)
		peers := l.candidates(v, wc.got, wc.bad, need, lenient)
		if !lenient && countHolders(peers) < need {
			continue // the pool would give up at once
		}
		err := l.poolRound(ctx, v, peers, need, win, fetch, wc)
		if !errors.Is(err, errPoolGaveUp) {
			return err
		}
	}
	return tooFewChunks(k, wc.got, wc.bad)
}

// windowChunks is what a window's fetches gathered: the verified chunks
// by shard, the shards that failed and why, and the buffers they were
// downloaded into, which are charged to the layer's window memory.
type windowChunks struct {
	got  [][]byte
	bad  map[int]error
	bufs []*[]byte

	mem     *windowMemory
	charged int64 // bytes of mem this window holds
	held    int64 // bytes of its buffers
}

// windowCost is what a window reserves of the window memory before its
// fetches start: k chunk buffers.
func windowCost(k int, win window) int64 { return int64(k) * win.bufCap }

func newWindowChunks(n int, mem *windowMemory, charged int64) *windowChunks {
	return &windowChunks{got: make([][]byte, n), bad: map[int]error{}, mem: mem, charged: charged}
}

// buffer returns a buffer for one of the window's chunks, charging the
// window memory for any beyond what the window reserved.
func (wc *windowChunks) buffer(win window) *[]byte {
	wc.held += win.bufCap
	extra := max(wc.held-wc.charged, 0)
	wc.charged += extra
	b := wc.mem.buffer(win.shardLen, win.bufCap, extra)
	wc.bufs = append(wc.bufs, b)
	return b
}

// release gives the window's buffers and memory back once nothing reads
// its chunks any more.
func (wc *windowChunks) release() {
	wc.mem.release(wc.charged, wc.bufs)
	wc.bufs, wc.got, wc.charged, wc.held = nil, nil, 0, 0
}

// candidates lists by shard the holders a round may fetch from ("" for
// none): none that delivered or failed this window already; in the
// strict round also none the metadata read doubted (it answered with
// another version, or failed) nor, while need others remain, any this
// layer avoids (stalled lately or not alive). For an inlined object the
// strict round offers only the records the read holds: the version was
// resolved from at least k of them, and any other costs a metadata call
// for bytes already in memory.
func (l *Layer) candidates(v *version, got [][]byte, bad map[int]error, need int, lenient bool) []meta.PeerID {
	peers := slices.Clone(v.obj.Distribution)
	for i := range peers {
		doubtful := v.absent[i] || v.failed[i] || (v.obj.Inlined && v.holders[i] == nil)
		if got[i] != nil || bad[i] != nil || (!lenient && doubtful) {
			peers[i] = ""
		}
	}
	if !lenient {
		l.dropAvoided(peers, need)
	}
	return peers
}

func countChunks(got [][]byte) int {
	n := 0
	for _, c := range got {
		if c != nil {
			n++
		}
	}
	return n
}

func countHolders(peers []meta.PeerID) int {
	n := 0
	for _, p := range peers {
		if p != "" {
			n++
		}
	}
	return n
}

// tooFewChunks is a window's failure, on one line, wrapping ErrQuorum,
// erasure.ErrTooFewShards and every failed shard's reason (so a caller
// can tell bitrot, say).
func tooFewChunks(k int, got [][]byte, bad map[int]error) error {
	e := &chunksError{have: countChunks(got), need: k, errs: []error{ErrQuorum, erasure.ErrTooFewShards}}
	for _, shard := range slices.Sorted(maps.Keys(bad)) {
		e.errs = append(e.errs, fmt.Errorf("shard %d: %w", shard, bad[shard]))
	}
	return e
}

type chunksError struct {
	have, need int
	errs       []error
}

func (e *chunksError) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d of %d shards read: %s", e.have, e.need, strings.Join(msgs, "; "))
}

func (e *chunksError) Unwrap() []error { return e.errs }

// dropAvoided blanks the holders this layer avoids (stalled lately or
// not alive), so the dispatcher picks none of them, as long as k others
// remain.
func (l *Layer) dropAvoided(peers []meta.PeerID, k int) {
	errs := make([]error, len(peers))
	for i, id := range peers {
		if id == "" {
			errs[i] = errAvoided
		}
	}
	errs = l.leaveOut(peers, errs, k)
	for i := range peers {
		if errs[i] != nil {
			peers[i] = ""
		}
	}
}

// chunkFetch is one granted fetch, downloaded whole.
type chunkFetch struct {
	cancel context.CancelFunc
	done   chan struct{}
	data   []byte
	err    error
	// withdrawn: the pool or the read cancelled it, so its error says
	// nothing about the shard. Only the read's goroutine touches it.
	withdrawn bool
}

// poolRound submits one read of need chunks of win to the pool, over the
// holders in peers (by shard, "" for none): the read waits while the
// policy grants it shard fetches, one per free slot; each downloads its
// chunk and reports to the pool, which finishes the read once need have
// succeeded. What it gathers goes into wc. It returns errPoolGaveUp when
// the pool ran out of holders first.
func (l *Layer) poolRound(ctx context.Context, v *version, peers []meta.PeerID, need int, win window, fetch fetchFunc, wc *windowChunks) error {
	pool := l.cfg.Pool
	submitted := time.Now()
	id, pr := pool.submit(peers, need, win.shardLen)
	fetches := map[int]*chunkFetch{}
	start := func(a sched.Action) {
		fctx, cancel := context.WithCancel(meta.WithReadPriority(ctx, a.Priority))
		buf := wc.buffer(win)
		f := &chunkFetch{cancel: cancel, done: make(chan struct{}), data: *buf}
		fetches[a.Shard] = f
		go func() {
			defer close(f.done)
			var n int64
			n, f.err = fetch(fctx, a.Shard, win.shardOff, f.data)
			pool.done(id, pr, a.Shard, f.err, n)
		}()
	}
	withdraw := func(shard int) {
		if f, ok := fetches[shard]; ok {
			f.withdrawn = true
			f.cancel()
		}
	}
	err := pool.await(ctx, pr, start, withdraw)
	pool.abort(id, pr)
	// When a burst's reads reach the pool, and how long each spent there,
	// shows how much of a GET's time the scheduler decides.
	l.log.Debug().Str("bucket", v.obj.Bucket).Str("key", v.obj.Key).Int64("submitted_us", submitted.UnixMicro()).
		Dur("pooled", time.Since(submitted)).Int64("shard_bytes", win.shardLen).Msg("pooled read")
	for shard, f := range fetches {
		select {
		case <-f.done:
		default:
			withdraw(shard) // need others succeeded: not needed
			<-f.done
		}
		f.cancel()
		switch {
		case f.err == nil:
			wc.got[shard] = f.data
		case !f.withdrawn && ctx.Err() == nil:
			wc.bad[shard] = f.err
		}
	}
	return err
}
