package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"tessera/erasure"
	"tessera/meta"
	"tessera/sched"
)

// MaxPooledShard is the largest shard range read through the fetch
// pool. A pooled fetch is a whole chunk downloaded into memory, so that
// it frees its slot when done whatever the other shards of its read do
// (holding slots until a whole read could go on would let reads that
// each hold part of the pool wait on each other forever). Larger reads
// stream outside the pool. 4 MiB covers every chunk of the workloads the
// scheduler is tuned for (99% of objects under 16 MB at k ≥ 4) while
// keeping the pool's memory at most L × 4 MiB.
const MaxPooledShard = 4 << 20

// chunkFetch is one granted fetch, downloaded whole.
type chunkFetch struct {
	cancel context.CancelFunc
	done   chan struct{}
	data   []byte
	err    error
}

// readPooled reads one part through the fetch pool: the read waits while
// the policy grants it shard fetches, one per free slot; each downloads
// its chunk and reports to the pool, which finishes the read once k have
// succeeded. The decoder then works from memory, falling back to direct
// reads (in readOrder's order) should a chunk fail verification. When
// the pool gives up (too few holders it trusts) the direct path runs.
func (l *Layer) readPooled(ctx context.Context, v *version, ec *erasure.Coder, p meta.Part, off, length int64, w io.Writer) error {
	o := v.obj
	shardOff, shardLen := ec.ShardRange(p.Size, off, length)
	if shardLen > MaxPooledShard || shardLen == 0 {
		return l.readDirect(ctx, v, ec, p, off, length, w)
	}
	peers := slices.Clone(o.Distribution)
	for i := range peers {
		if v.absent[i] || v.failed[i] {
			peers[i] = "" // the dispatcher must not pick a doubtful holder
		}
	}
	l.dropAvoided(peers, o.Code.K)
	pool := l.cfg.Pool
	submitted := time.Now()
	id, pr := pool.submit(peers, o.Code.K, shardLen)
	open := l.opener(v, p.Number)
	var mu sync.Mutex
	fetches := map[int]*chunkFetch{}
	var wg sync.WaitGroup
	start := func(a sched.Action) {
		shard := a.Shard
		fctx, cancel := context.WithCancel(meta.WithReadPriority(ctx, a.Priority))
		f := &chunkFetch{cancel: cancel, done: make(chan struct{})}
		mu.Lock()
		fetches[shard] = f
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(f.done)
			f.data, f.err = fetchChunk(fctx, open, shard, shardOff, shardLen)
			pool.done(id, pr, shard, f.err, int64(len(f.data)))
		}()
	}
	cancel := func(shard int) {
		mu.Lock()
		if f, ok := fetches[shard]; ok {
			f.cancel()
		}
		mu.Unlock()
	}
	err := pool.await(ctx, pr, start, cancel)
	pool.abort(id, pr)
	// When a burst's reads reach the pool, and how long each spent there,
	// shows how much of a GET's time the scheduler decides.
	l.log.Debug().Str("bucket", o.Bucket).Str("key", o.Key).Int64("submitted_us", submitted.UnixMicro()).
		Dur("pooled", time.Since(submitted)).Int64("shard_bytes", shardLen).Msg("pooled read")
	defer func() {
		for _, f := range fetches {
			f.cancel()
		}
		wg.Wait()
	}()
	switch {
	case errors.Is(err, errPoolGaveUp):
		return l.readDirect(ctx, v, ec, p, off, length, w)
	case err != nil:
		return err
	}
	var order []int
	for shard, f := range fetches {
		select {
		case <-f.done:
		default:
			f.cancel() // k others succeeded: not needed
			<-f.done
		}
		if f.err == nil {
			order = append(order, shard)
		}
	}
	slices.Sort(order)           // data shards first: no reconstruction when they are there
	order = groupOrder(v, order) // the pool's picks, then fallbacks
	stats, err := ec.Decode(ctx, w, p.Size, off, length, order, func(ctx context.Context, shard int, so, sl int64) (io.ReadCloser, error) {
		if f, ok := fetches[shard]; ok && f.err == nil && so == shardOff && sl == shardLen {
			return io.NopCloser(bytes.NewReader(f.data)), nil
		}
		return open(ctx, shard, so, sl)
	})
	l.noteBad(v, p.Number, stats)
	if errors.Is(err, erasure.ErrTooFewShards) {
		return fmt.Errorf("%w: %w", ErrQuorum, err)
	}
	return err
}

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

// fetchChunk downloads a shard range whole.
func fetchChunk(ctx context.Context, open erasure.OpenFunc, shard int, off, length int64) ([]byte, error) {
	rc, err := open(ctx, shard, off, length)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, length)
	n, err := io.ReadFull(rc, buf)
	if err != nil {
		return nil, fmt.Errorf("read shard %d: got %d of %d bytes: %w", shard, n, length, err)
	}
	return buf, nil
}
