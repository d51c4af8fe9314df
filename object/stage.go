package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"tessera/erasure"
	"tessera/meta"
)

// stageResult is the outcome of streaming one erasure stream to its peers.
type stageResult struct {
	size int64
	ids  []string // staged file per shard; "" where errs[i] != nil
	errs []error
	ok   int
}

// stage encodes r into len(dist) shard streams and stages shard i on
// dist[i] through an io.Pipe, all concurrently, so memory stays at a few
// blocks whatever the size. Peers this layer avoids (stalled lately, or
// not alive to gossip) get no stream while quorum others remain; a peer
// that fails or stalls during the write is dropped while quorum remain.
// r is read to EOF. Every goroutine started here has returned when stage
// does.
func (l *Layer) stage(ctx context.Context, ec *erasure.Coder, dist []meta.PeerID, r io.Reader, quorum int) (stageResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(dist)
	res := stageResult{ids: make([]string, n), errs: make([]error, n)}
	if !asksAll(ctx) {
		res.errs = l.leaveOut(dist, res.errs, quorum)
	}
	writers := make([]io.Writer, n)
	pipes := make([]*io.PipeWriter, n)
	cancels := make([]context.CancelFunc, n)
	prog := newProgress(n, quorum, l.cfg.StallAfter, l.cfg.PeerTimeout)
	done := make(chan int, n)
	var wg sync.WaitGroup
	for i, id := range dist {
		if res.errs[i] != nil {
			prog.gone(i)
			continue // a nil writer: the encoder skips the shard
		}
		pr, pw := io.Pipe()
		sctx, scancel := context.WithCancel(ctx)
		pipes[i], cancels[i] = pw, scancel
		writers[i] = prog.writer(i, pw, func(err error) {
			l.stall(id, "a shard write")
			scancel()
			pr.CloseWithError(err)
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer scancel()
			tmp, err := call(sctx, l, id, 0, func(ctx context.Context, c ShardClient) (string, error) {
				return c.StageShard(ctx, pr)
			})
			// Unblock the encoder if the peer gave up before the end.
			pr.CloseWithError(fmt.Errorf("stage on %s ended: %w", id, errOr(err, io.ErrClosedPipe)))
			if err != nil {
				prog.gone(i)
			}
			res.ids[i], res.errs[i] = tmp, err
			done <- i
		}()
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		prog.watch(wctx)
	}()
	size, werrs, err := ec.Encode(ctx, r, writers, quorum)
	stopWatch()
	<-watched
	closePipes(pipes, werrs, err)
	if err != nil {
		cancel()
	}
	l.awaitStaged(dist, res.errs, done, cancels, quorum, cancel)
	wg.Wait()
	res.size = size
	res.merge(werrs, err)
	if err != nil {
		return res, fmt.Errorf("encode: %w", err)
	}
	return res, nil
}

// awaitStaged waits for the stagers still running once the encoder is
// done, while the peers fsync. Once quorum succeeded, the others get as
// long again as those took (at least StallAfter) before they are given
// up and marked stalled; none waits longer than PeerTimeout in all.
// errs[i] is read only after stager i reported on done.
func (l *Layer) awaitStaged(dist []meta.PeerID, errs []error, done <-chan int, cancels []context.CancelFunc, quorum int, cancelAll context.CancelFunc) {
	running := map[int]bool{}
	for i, c := range cancels {
		if c != nil {
			running[i] = true
		}
	}
	start := time.Now()
	hard := time.NewTimer(l.cfg.PeerTimeout)
	defer hard.Stop()
	var grace <-chan time.Time
	ok := 0
	for len(running) > 0 {
		select {
		case i := <-done:
			delete(running, i)
			if errs[i] == nil {
				ok++
				l.recovered(dist[i])
			}
			if ok >= quorum && grace == nil && len(running) > 0 {
				grace = l.graceAfter(start)
			}
		case <-grace:
			l.cutStragglers(dist, running, cancels)
			grace = make(chan time.Time) // never again
		case <-hard.C:
			cancelAll()
		}
	}
}

// merge folds the encoder's per-writer errors and its overall failure
// into the stagers' results: a shard is good only if both sides are.
func (res *stageResult) merge(werrs []error, err error) {
	for i := range res.errs {
		switch {
		case errors.Is(res.errs[i], errAvoided):
		case i < len(werrs) && werrs[i] != nil:
			res.errs[i] = fmt.Errorf("write shard %d: %w", i, werrs[i])
		case res.errs[i] != nil:
			res.errs[i] = fmt.Errorf("stage shard %d: %w", i, res.errs[i])
		case err != nil:
			res.errs[i] = fmt.Errorf("stage shard %d: %w", i, err)
		}
		if res.errs[i] != nil {
			res.ids[i] = ""
		} else {
			res.ok++
		}
	}
}

// closePipes ends every shard stream: normally for the shards the encoder
// finished, with the failure otherwise, so no stager waits forever.
func closePipes(pipes []*io.PipeWriter, werrs []error, err error) {
	for i, pw := range pipes {
		switch {
		case pw == nil:
		case err != nil:
			pw.CloseWithError(err)
		case i < len(werrs) && werrs[i] != nil:
			pw.CloseWithError(werrs[i])
		default:
			pw.Close()
		}
	}
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// stageErrors maps the failed shards of a stage to their peers.
func stageErrors(dist []meta.PeerID, res stageResult) map[meta.PeerID]error {
	out := map[meta.PeerID]error{}
	for i, err := range res.errs {
		if err != nil {
			out[dist[i]] = err
		}
	}
	return out
}
