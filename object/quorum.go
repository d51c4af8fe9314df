package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tessera/meta"
)

// QuorumError reports an operation that too few peers answered or agreed
// on. It unwraps to ErrQuorum.
type QuorumError struct {
	Op      string
	Need    int
	Got     int
	PerPeer map[meta.PeerID]error
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v: %d of %d needed", e.Op, ErrQuorum, e.Got, e.Need)
	ids := make([]string, 0, len(e.PerPeer))
	for id := range e.PerPeer {
		ids = append(ids, string(id))
	}
	sort.Strings(ids)
	for i, id := range ids {
		sep := "; "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(&b, "%s%s: %v", sep, id, e.PerPeer[meta.PeerID(id)])
	}
	if len(ids) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap lets errors.Is(err, ErrQuorum) match, and ErrInsufficientStorage
// too when full peers are why the quorum failed.
func (e *QuorumError) Unwrap() []error {
	if e.outOfSpace() {
		return []error{ErrQuorum, ErrInsufficientStorage}
	}
	return []error{ErrQuorum}
}

// outOfSpace reports whether peers refused for lack of space, and even if
// every other peer asked had succeeded, the rest would still fall short
// of Need: retrying cannot help until space is freed or added. A quorum
// missed only because some peer is also down stays a plain (retryable)
// quorum failure.
func (e *QuorumError) outOfSpace() bool {
	full := 0
	for _, err := range e.PerPeer {
		if errors.Is(err, meta.ErrDiskFull) {
			full++
		}
	}
	asked := e.Got + len(e.PerPeer)
	return full > 0 && asked-full < e.Need
}

// reply is one peer's answer to a fanned-out call.
type reply[T any] struct {
	peer meta.PeerID
	val  T
	err  error
}

// fanout calls fn on every peer concurrently and waits for all of them.
// Each call gets its own child context, bounded by timeout when positive.
// Replies come back in the order of peers.
func fanout[T any](ctx context.Context, l *Layer, peers []meta.PeerID, timeout time.Duration,
	fn func(ctx context.Context, i int, c ShardClient) (T, error)) []reply[T] {
	return fanoutQuorum(ctx, l, peers, timeout, 0, fn)
}

// fanoutQuorum is fanout for an operation that needs need answers
// (successes or the peers' own refusals). Peers this layer avoids are
// held in reserve, asked only once the others can no longer give need
// answers, and otherwise reply errAvoided. Once need answers are in, the
// calls still running get as long again as those took (at least
// StallAfter) before they are given up and their peers marked stalled,
// so one hung peer delays an operation by about a second rather than by
// its whole deadline. need 0 asks every peer and waits for every call,
// and so does a repair's or move's own call (quiet ctx): no client waits
// on it, and on a loaded machine a slow peer is not a hung one.
func fanoutQuorum[T any](ctx context.Context, l *Layer, peers []meta.PeerID, timeout time.Duration, need int,
	fn func(ctx context.Context, i int, c ShardClient) (T, error)) []reply[T] {
	out := make([]reply[T], len(peers))
	cancels := make([]context.CancelFunc, len(peers))
	done := make(chan int, len(peers))
	launch := func(i int) {
		cctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		go func() {
			out[i].val, out[i].err = call(cctx, l, peers[i], timeout, func(ctx context.Context, c ShardClient) (T, error) {
				return fn(ctx, i, c)
			})
			done <- i
		}()
	}
	reserve := map[int]bool{}
	if !asksAll(ctx) { // background work asks every peer it means to
		reserve = l.reserveOf(peers, need)
	}
	running := make(map[int]bool, len(peers))
	for i, id := range peers {
		out[i].peer = id
		if reserve[i] {
			out[i].err = errAvoided
			continue
		}
		running[i] = true
		launch(i)
	}
	start := time.Now()
	var grace <-chan time.Time
	answers := 0
	for len(running) > 0 {
		select {
		case i := <-done:
			delete(running, i)
			cancels[i]()
			if out[i].err == nil || isAnswer(out[i].err) {
				answers++
			}
			if answers+len(running) < need {
				for j := range reserve { // the others cannot make it: ask all
					running[j] = true
					launch(j)
				}
				clear(reserve)
			}
			// A repair's or move's own calls (quiet) wait out their
			// deadline: no client waits on them, and cutting a slow peer
			// would only make the background work fail and retry.
			if need > 0 && answers >= need && grace == nil && len(running) > 0 && !isQuiet(ctx) {
				grace = l.graceAfter(start)
			}
		case <-grace:
			l.cutStragglers(peers, running, cancels)
			grace = make(chan time.Time) // never again
		}
	}
	return out
}

// graceAfter is when the calls of an operation still running once it has
// what it needs are given up: as long again as those took since start,
// at least StallAfter.
func (l *Layer) graceAfter(start time.Time) <-chan time.Time {
	return time.After(max(l.cfg.StallAfter, time.Since(start)))
}

// cutStragglers gives up the calls still running, marking their peers
// stalled.
func (l *Layer) cutStragglers(peers []meta.PeerID, running map[int]bool, cancels []context.CancelFunc) {
	for i := range running {
		l.stall(peers[i], "a call the quorum did without")
		cancels[i]()
	}
}

// reserveOf is the set of peers an operation needing need answers holds
// in reserve: those avoided, as long as need others remain.
func (l *Layer) reserveOf(peers []meta.PeerID, need int) map[int]bool {
	if need <= 0 {
		return map[int]bool{}
	}
	errs := l.leaveOut(peers, make([]error, len(peers)), need)
	out := map[int]bool{}
	for i, err := range errs {
		if err != nil {
			out[i] = true
		}
	}
	return out
}

// call runs fn against one peer's client. A positive timeout is the
// ceiling of the call's deadline, which otherwise follows the peer's
// observed latency (except for repairs' and moves' own calls); such a call's outcome feeds that latency, and running
// out of time marks the peer stalled. Without a timeout the caller bounds
// the call (shard streams watch their own progress).
func call[T any](ctx context.Context, l *Layer, id meta.PeerID, timeout time.Duration,
	fn func(ctx context.Context, c ShardClient) (T, error)) (T, error) {
	var zero T
	c, err := l.cfg.Cluster.Client(id)
	if err != nil {
		return zero, fmt.Errorf("peer %s: %w", id, err)
	}
	if timeout <= 0 {
		return fn(ctx, c)
	}
	// Repairs and moves keep the ceiling: no client waits on them, and
	// their calls (rebuilt shards committed, records rewritten) take
	// longer than the calls the latency is learnt from.
	learn := !isQuiet(ctx)
	if learn {
		timeout = l.health.deadline(id, timeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	v, err := fn(cctx, c)
	switch {
	case err == nil || isAnswer(err):
		if learn {
			l.health.observe(id, time.Since(start))
		}
	case ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		l.stall(id, "a call past its deadline")
	}
	return v, err
}

// isAnswer reports whether err is the peer's own reply (a sentinel it
// sends back) rather than a failure to reach it.
func isAnswer(err error) bool {
	for _, s := range []error{meta.ErrNotFound, meta.ErrBucketNotFound, meta.ErrStale, meta.ErrUploadNotFound,
		meta.ErrBucketExists, meta.ErrBucketNotEmpty, meta.ErrInvalidArgument, meta.ErrDiskFull} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// tally summarises replies: how many succeeded, and the failures by peer.
type tally struct {
	ok   int
	errs map[meta.PeerID]error
}

func tallyOf[T any](rs []reply[T]) tally {
	t := tally{errs: map[meta.PeerID]error{}}
	for _, r := range rs {
		if r.err == nil {
			t.ok++
		} else {
			t.errs[r.peer] = r.err
		}
	}
	return t
}

// count is the number of failures matching target.
func (t tally) count(target error) int {
	n := 0
	for _, err := range t.errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// without returns the failures other than those matching target.
func (t tally) without(target error) map[meta.PeerID]error {
	out := map[meta.PeerID]error{}
	for id, err := range t.errs {
		if !errors.Is(err, target) {
			out[id] = err
		}
	}
	return out
}

func (t tally) quorumError(op string, need int) *QuorumError {
	return &QuorumError{Op: op, Need: need, Got: t.ok, PerPeer: t.errs}
}

// failure is the error of a fanned-out call that fell short of need
// acks: the peers' refusal when they rejected the request as malformed,
// else a QuorumError. The distinction matters to clients: a refusal is
// the request's fault (4xx), a QuorumError is worth retrying (503).
func (t tally) failure(op string, need int) error {
	if t.ok == 0 {
		errs := make([]error, 0, len(t.errs))
		for _, err := range t.errs {
			errs = append(errs, err)
		}
		if rej := rejectionOf(errs, need); rej != nil {
			return fmt.Errorf("%s: %w", op, rej)
		}
	}
	return t.quorumError(op, need)
}

// rejectionOf returns one of errs matching meta.ErrInvalidArgument when
// they settle the request: all of errs are such refusals, or at least
// need of them are (the rest may be peers that did not answer). Peers
// validate requests alike, so their refusal is deterministic.
func rejectionOf(errs []error, need int) error {
	var first error
	n := 0
	for _, err := range errs {
		if errors.Is(err, meta.ErrInvalidArgument) {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n > 0 && (n == len(errs) || n >= need) {
		return first
	}
	return nil
}

func majority(n int) int { return n/2 + 1 }

// querySet is the peers a key's metadata may live on: the union of the
// key's placements for every code in use, since the class of an existing
// object is unknown until its record is read.
type querySet struct {
	peers []meta.PeerID
	index map[meta.PeerID]int
	codes []codeSet
}

// codeSet is one code's placement within a querySet.
type codeSet struct {
	code  meta.Code
	peers []meta.PeerID
}

func (l *Layer) querySet(bucket, key string) (querySet, error) {
	q := querySet{index: map[meta.PeerID]int{}}
	width := len(l.cfg.Cluster.Peers())
	for _, c := range l.queryCodes() {
		var sets [][]meta.PeerID
		if c.N() <= width {
			ps, err := l.cfg.Cluster.Placement(bucket, key, c.N())
			if err != nil {
				return querySet{}, fmt.Errorf("placement of %s/%s for %s: %w", bucket, key, c, err)
			}
			sets = append(sets, ps)
		}
		// A new epoch's ring may be narrower than the last one (an epoch
		// minted before every peer was seen): keys of a code it cannot
		// place still sit where an older ring put them.
		sets = append(sets, l.olderPlacements(bucket, key, c.N())...)
		for _, ps := range sets {
			q.codes = append(q.codes, codeSet{code: c, peers: ps})
			for _, p := range ps {
				if _, ok := q.index[p]; !ok {
					q.index[p] = len(q.peers)
					q.peers = append(q.peers, p)
				}
			}
		}
	}
	return q, nil
}

// covered reports whether the peers for which answered is true intersect
// every possible write quorum of every code, i.e. no committed write can
// have gone unseen.
func (q querySet) covered(answered func(meta.PeerID) bool) bool {
	for _, cs := range q.codes {
		got := 0
		for _, p := range cs.peers {
			if answered(p) {
				got++
			}
		}
		if got < cs.code.N()-cs.code.WriteQuorum()+1 {
			return false
		}
	}
	return true
}
