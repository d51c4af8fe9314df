package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"tessera/erasure"
	"tessera/meta"
)

// ErrRepairIncomplete reports a repair that could not restore every shard
// now (a peer unreachable, a rebuild or commit failed); retry later.
var ErrRepairIncomplete = errors.New("repair incomplete")

// RepairOptions tune one RepairObject call.
type RepairOptions struct {
	// Suspect shards of version Stamp were reported bad (a read failed
	// their checksums, or their peer's scrubber found them damaged); their
	// shard files are read and verified, and rebuilt if they fail. Other
	// held shards are trusted: verifying every shard is the peers' deep
	// scrub (package scrub), done where the bytes are.
	Stamp   meta.Stamp
	Suspect []int
}

// RepairResult reports one RepairObject call.
type RepairResult struct {
	Stamp    meta.Stamp // the version examined; zero when the key holds none
	Repaired []int      // shards rewritten on their peers
}

// RepairCommitter is implemented by shard clients that can replace a
// damaged copy of the version they hold (peer.Client, storage.Store).
// Without it, repair falls back to Commit, which refuses a stamp the
// peer already holds.
type RepairCommitter interface {
	RepairCommit(ctx context.Context, o *meta.Object, staged []string) error
}

type quietKey struct{}

// quiet marks ctx as a repair's own reads, whose findings must not be
// reported back to the repair queue as new work.
func quiet(ctx context.Context) context.Context { return context.WithValue(ctx, quietKey{}, true) }

func isQuiet(ctx context.Context) bool { v, _ := ctx.Value(quietKey{}).(bool); return v }

// RepairObject brings the current version of bucket/key back to full
// redundancy: every shard of its distribution whose peer holds no copy,
// an older one or a damaged one is rebuilt from k good shards and
// committed there with the same stamp. Tombstones are copied the same
// way. A peer holding a newer version is left alone: repair never undoes a
// write. The result lists what was rewritten; ErrRepairIncomplete means
// some shard still lacks a good copy.
func (l *Layer) RepairObject(ctx context.Context, bucket, key string, opts RepairOptions) (RepairResult, error) {
	ctx = quiet(ctx)
	q, err := l.querySet(bucket, key)
	if err != nil {
		return RepairResult{}, err
	}
	v, _, err := l.readMeta(ctx, q, bucket, key)
	if err != nil || v == nil {
		return RepairResult{}, err
	}
	res := RepairResult{Stamp: v.obj.Stamp}
	h, err := l.survey(ctx, v.obj)
	if err != nil {
		return res, err
	}
	if err := l.verifyHeld(ctx, h, opts); err != nil {
		return res, err
	}
	if len(h.targets) == 0 {
		return res, h.incomplete()
	}
	done, err := l.rebuild(ctx, h)
	res.Repaired = done
	if err != nil {
		return res, fmt.Errorf("repair %s/%s: %w: %w", bucket, key, ErrRepairIncomplete, err)
	}
	if err := h.incomplete(); err != nil {
		return res, fmt.Errorf("repair %s/%s: %w", bucket, key, err)
	}
	if len(done) > 0 {
		l.log.Info().Str("bucket", bucket).Str("key", key).Ints("shards", done).Msg("repaired")
	}
	return res, nil
}

// heal is what a survey learnt about one version's shards.
type heal struct {
	v           *version
	targets     []int // shards to rebuild, ascending
	unreachable map[int]error
	// from, when set, is where the rebuild reads its sources: the same
	// version under the distribution it is moving off (copyShards), whose
	// every holder still has its copy. Targets go to v's distribution.
	from *version
}

// rebuildWith is ec's rebuild for h: one that reads the targets' own
// shards too when they come from other copies (from).
func (h *heal) rebuildWith(ec *erasure.Coder) func(context.Context, int64, []int, erasure.OpenFunc, map[int]io.Writer) (erasure.DecodeStats, error) {
	if h.from != nil {
		return ec.RebuildFrom
	}
	return ec.Rebuild
}

// source is the version whose holders the rebuild reads.
func (h *heal) source() *version {
	if h.from != nil {
		return h.from
	}
	return h.v
}

func (h *heal) incomplete() error {
	if len(h.unreachable) == 0 {
		return nil
	}
	var errs []error
	for i, err := range h.unreachable {
		errs = append(errs, fmt.Errorf("shard %d: %w", i, err))
	}
	return fmt.Errorf("%w: %w", ErrRepairIncomplete, errors.Join(errs...))
}

// survey reads the records of every shard of o from its peer, waiting for
// all of them (the read path stops at a quorum). A peer keeping o under a
// newer record holds o's shard: a source, not a target.
func (l *Layer) survey(ctx context.Context, o *meta.Object) (*heal, error) {
	rs := fanout(ctx, l, o.Distribution, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) ([]*meta.Object, error) {
		return c.ReadVersions(ctx, o.Bucket, o.Key)
	})
	h := &heal{v: &version{obj: o, holders: map[int]*meta.Object{}, absent: map[int]bool{}, failed: map[int]bool{}},
		unreachable: map[int]error{}}
	for i, r := range rs {
		a := answerOf(r.peer, o.Bucket, o.Key, r.val, r.err)
		held := a.copyOf(o.Stamp, i)
		err := a.err
		switch {
		case held != nil:
			h.v.holders[i] = held
		case err == nil && o.Stamp.Less(a.obj.Stamp):
			// Being overwritten: that write owns this shard now.
		case err == nil, errors.Is(err, meta.ErrNotFound), errors.Is(err, meta.ErrCorrupt):
			h.targets = append(h.targets, i)
		default:
			h.unreachable[i] = err
			h.v.failed[i] = true
		}
	}
	if len(h.v.holders) < o.Code.K && !o.Deleted {
		return nil, fmt.Errorf("repair %s/%s: %d good copies of %s, need %d: %w",
			o.Bucket, o.Key, len(h.v.holders), o.Stamp, o.Code.K, ErrQuorum)
	}
	return h, nil
}

// verifyHeld checks the shard files of the held copies that opts asks for
// and moves the damaged ones to the targets.
func (l *Layer) verifyHeld(ctx context.Context, h *heal, opts RepairOptions) error {
	o := h.v.obj
	if o.Deleted {
		return nil
	}
	ec, err := l.coder(o.Code, o.BlockSize)
	if err != nil {
		return err
	}
	if o.Inlined {
		// Checking inline shards costs no I/O, so it is always done.
		for i, rec := range h.v.holders {
			if err := ec.VerifyShard(bytes.NewReader(rec.Inline), o.Size, i); err != nil {
				delete(h.v.holders, i)
				h.targets = append(h.targets, i)
			}
		}
		slices.Sort(h.targets)
		return nil
	}
	check := map[int]bool{}
	if opts.Stamp == o.Stamp {
		for _, i := range opts.Suspect {
			check[i] = true
		}
	}
	for i := range o.Distribution {
		if h.v.holders[i] == nil || !check[i] {
			continue
		}
		if err := l.verifyShard(ctx, ec, o, i); err != nil {
			l.log.Warn().Str("bucket", o.Bucket).Str("key", o.Key).Int("shard", i).Err(err).Msg("shard damaged")
			delete(h.v.holders, i)
			h.targets = append(h.targets, i)
		}
	}
	slices.Sort(h.targets)
	return nil
}

// verifyShard reads every part file of shard i and checks its checksums.
func (l *Layer) verifyShard(ctx context.Context, ec *erasure.Coder, o *meta.Object, i int) error {
	for _, p := range partsOf(o) {
		if err := l.verifyPart(ctx, ec, o, i, p); err != nil {
			return fmt.Errorf("part %d: %w", p.Number, err)
		}
	}
	return nil
}

func (l *Layer) verifyPart(ctx context.Context, ec *erasure.Coder, o *meta.Object, i int, p meta.Part) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := call(ctx, l, o.Distribution[i], 0, func(ctx context.Context, c ShardClient) (io.ReadCloser, error) {
		return c.ReadShard(ctx, o.Bucket, o.Key, o.Stamp, p.Number, 0, ec.ShardFileSize(p.Size))
	})
	if err != nil {
		return err
	}
	sr := &stallReader{rc: rc, d: l.cfg.PeerTimeout, cancel: cancel}
	defer sr.Close()
	return ec.VerifyShard(sr, p.Size, i)
}

// rebuild regenerates the target shards and commits them. It returns the
// shards committed; a target that failed is reported in the error and the
// others still proceed.
func (l *Layer) rebuild(ctx context.Context, h *heal) ([]int, error) {
	o := h.v.obj
	if src := h.source(); len(src.holders) < o.Code.K && !o.Deleted {
		return nil, fmt.Errorf("%d good copies, need %d: %w", len(src.holders), o.Code.K, ErrQuorum)
	}
	staged := map[int][]string{}
	inline := map[int][]byte{}
	failed := map[int]error{}
	if !o.Deleted {
		ec, err := l.coder(o.Code, o.BlockSize)
		if err != nil {
			return nil, err
		}
		if o.Inlined {
			inline, err = l.rebuildInline(ctx, ec, h)
			if err != nil {
				return nil, err
			}
		} else {
			for _, p := range partsOf(o) {
				l.rebuildPart(ctx, ec, h, p, staged, failed)
			}
		}
	}
	var done []int
	for _, t := range h.targets {
		if failed[t] != nil {
			continue
		}
		rec := *o
		rec.ShardIndex, rec.Inline = t, inline[t]
		_, err := call(ctx, l, o.Distribution[t], l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (struct{}, error) {
			if rc, ok := c.(RepairCommitter); ok {
				return struct{}{}, rc.RepairCommit(ctx, &rec, staged[t])
			}
			return struct{}{}, c.Commit(ctx, &rec, staged[t])
		})
		switch {
		case err == nil:
			done = append(done, t)
		case errors.Is(err, meta.ErrStale):
			// A newer write reached the peer meanwhile: nothing to repair.
		default:
			failed[t] = fmt.Errorf("commit on %s: %w", o.Distribution[t], err)
		}
	}
	var errs []error
	for t, err := range failed {
		errs = append(errs, fmt.Errorf("shard %d: %w", t, err))
	}
	return done, errors.Join(errs...)
}

// sourceOrder is the held shards, in index order, as rebuild sources.
func (h *heal) sourceOrder() []int {
	var out []int
	src := h.source()
	for i := range src.obj.Distribution {
		if src.holders[i] != nil {
			out = append(out, i)
		}
	}
	return out
}

// rebuildInline regenerates the target shards of an inlined object from
// the inline bytes of the held records.
func (l *Layer) rebuildInline(ctx context.Context, ec *erasure.Coder, h *heal) (map[int][]byte, error) {
	bufs := map[int]*bytes.Buffer{}
	targets := map[int]io.Writer{}
	for _, t := range h.targets {
		bufs[t] = new(bytes.Buffer)
		targets[t] = bufs[t]
	}
	if _, err := h.rebuildWith(ec)(ctx, h.v.obj.Size, h.sourceOrder(), l.opener(h.source(), 1), targets); err != nil {
		return nil, fmt.Errorf("rebuild inline: %w", err)
	}
	out := map[int][]byte{}
	for t, b := range bufs {
		out[t] = b.Bytes()
	}
	return out, nil
}

// rebuildPart regenerates part p of every target shard and streams each
// to its peer's staging area. A target whose peer fails is recorded in
// failed and dropped; the others go on.
func (l *Layer) rebuildPart(ctx context.Context, ec *erasure.Coder, h *heal, p meta.Part, staged map[int][]string, failed map[int]error) {
	o := h.v.obj
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	targets := map[int]io.Writer{}
	pipes := map[int]*io.PipeWriter{}
	sinks := map[int]*dropWriter{}
	ids := map[int]string{}
	errs := map[int]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, t := range h.targets {
		if failed[t] != nil {
			continue
		}
		pr, pw := io.Pipe()
		pipes[t], sinks[t] = pw, &dropWriter{w: pw}
		targets[t] = sinks[t]
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := call(ctx, l, o.Distribution[t], 0, func(ctx context.Context, c ShardClient) (string, error) {
				return c.StageShard(ctx, pr)
			})
			pr.CloseWithError(fmt.Errorf("stage on %s ended: %w", o.Distribution[t], errOr(err, io.ErrClosedPipe)))
			mu.Lock()
			ids[t], errs[t] = id, err
			mu.Unlock()
		}()
	}
	_, err := h.rebuildWith(ec)(ctx, p.Size, h.sourceOrder(), l.opener(h.source(), p.Number), targets)
	for _, pw := range pipes {
		if err != nil {
			pw.CloseWithError(err)
		} else {
			pw.Close()
		}
	}
	wg.Wait()
	for t := range pipes {
		switch {
		case err != nil:
			failed[t] = fmt.Errorf("rebuild part %d: %w", p.Number, err)
		case sinks[t].err != nil:
			failed[t] = fmt.Errorf("part %d: write: %w", p.Number, sinks[t].err)
		case errs[t] != nil:
			failed[t] = fmt.Errorf("part %d: stage: %w", p.Number, errs[t])
		default:
			staged[t] = append(staged[t], ids[t])
		}
	}
}

// dropWriter passes writes on until the first error, then swallows the
// rest, so one target peer failing does not abort the others' rebuild.
type dropWriter struct {
	w   io.Writer
	err error
}

func (d *dropWriter) Write(p []byte) (int, error) {
	if d.err != nil {
		return len(p), nil
	}
	if _, err := d.w.Write(p); err != nil {
		d.err = err
	}
	return len(p), nil
}
