package object

import (
	"context"
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
// blocks whatever the size. A peer that fails or stalls is dropped while
// quorum remain. r is read to EOF. Every goroutine started here has
// returned when stage does.
func (l *Layer) stage(ctx context.Context, ec *erasure.Coder, dist []meta.PeerID, r io.Reader, quorum int) (stageResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(dist)
	res := stageResult{ids: make([]string, n), errs: make([]error, n)}
	writers := make([]io.Writer, n)
	pipes := make([]*io.PipeWriter, n)
	var wg sync.WaitGroup
	for i, id := range dist {
		pr, pw := io.Pipe()
		sctx, scancel := context.WithCancel(ctx)
		pipes[i] = pw
		writers[i] = &stallWriter{w: pw, d: l.cfg.PeerTimeout, abort: func(err error) {
			scancel()
			pr.CloseWithError(err)
		}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer scancel()
			tmp, err := call(sctx, l, id, 0, func(ctx context.Context, c ShardClient) (string, error) {
				return c.StageShard(ctx, pr)
			})
			// Unblock the encoder if the peer gave up before the end.
			pr.CloseWithError(fmt.Errorf("stage on %s ended: %w", id, errOr(err, io.ErrClosedPipe)))
			res.ids[i], res.errs[i] = tmp, err
		}()
	}
	size, werrs, err := ec.Encode(ctx, r, writers, quorum)
	closePipes(pipes, werrs, err)
	if err != nil {
		cancel()
	}
	// The peers now fsync; one that takes longer than a stalled write
	// would is dropped too.
	t := time.AfterFunc(l.cfg.PeerTimeout, cancel)
	wg.Wait()
	t.Stop()
	res.size = size
	res.merge(werrs, err)
	if err != nil {
		return res, fmt.Errorf("encode: %w", err)
	}
	return res, nil
}

// merge folds the encoder's per-writer errors and its overall failure
// into the stagers' results: a shard is good only if both sides are.
func (res *stageResult) merge(werrs []error, err error) {
	for i := range res.errs {
		switch {
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
