package object

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"tessera/checksum"
	"tessera/meta"
)

// PutObject stores r (size bytes, or -1 when unknown) under key. The write
// is visible once a write quorum of the key's peers committed it; a failed
// PUT leaves the previous version readable.
func (l *Layer) PutObject(ctx context.Context, bucket, key string, r io.Reader, size int64, opts PutOptions) (ObjectInfo, error) {
	class, code, err := l.codeFor(opts.StorageClass)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	if opts.DeleteMarker && size != 0 {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w: a delete marker holds no bytes", bucket, key, ErrEntityTooLarge)
	}
	return l.put(ctx, putReq{bucket: bucket, key: key, body: r, size: size, opts: opts, class: class, code: code, sum: checksum.Default})
}

type putReq struct {
	bucket, key string
	body        io.Reader
	size        int64
	opts        PutOptions
	class       string
	code        meta.Code
	// sum is the algorithm of the object checksum to compute when the
	// body declares none.
	sum checksum.Algorithm
}

func (l *Layer) put(ctx context.Context, p putReq) (ObjectInfo, error) {
	info, err := l.putObject(ctx, p)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", p.bucket, p.key, err)
	}
	return info, nil
}

func (l *Layer) putObject(ctx context.Context, p putReq) (ObjectInfo, error) {
	if p.size > MaxPutSize {
		return ObjectInfo{}, fmt.Errorf("%w: %d bytes", ErrEntityTooLarge, p.size)
	}
	if err := l.requireBucket(ctx, p.bucket); err != nil {
		return ObjectInfo{}, err
	}
	dist, err := l.cfg.Cluster.Placement(p.bucket, p.key, p.code.N())
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("placement: %w", err)
	}
	o := l.newRecord(p, dist)
	want := declaredOf(p.body)
	if want == "" {
		want = p.sum
	}
	body := newBodyReader(p.body, p.size, MaxPutSize).trackSums(p.body, want)
	var r io.Reader = body
	if lim := l.cfg.InlineLimit; lim >= 0 && p.size <= lim {
		head, ended, err := readHead(body, lim+1)
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("read body: %w", err)
		}
		if ended {
			return l.putInline(ctx, o, head, body, p.opts)
		}
		r = io.MultiReader(bytes.NewReader(head), body)
	}
	return l.putStaged(ctx, o, body, r, p.opts)
}

// newRecord is the metadata of a new single-part version, minus what the
// body determines.
func (l *Layer) newRecord(p putReq, dist []meta.PeerID) *meta.Object {
	return &meta.Object{
		Bucket:       p.bucket,
		Key:          p.key,
		ContentType:  p.opts.ContentType,
		UserMeta:     p.opts.UserMeta,
		Headers:      p.opts.Headers,
		StorageClass: p.class,
		Code:         p.code,
		BlockSize:    l.cfg.BlockSize,
		Distribution: dist,
		DeleteMarker: p.opts.DeleteMarker,
	}
}

// finishRecord fills what is known once the body has been read, and
// stamps the version last so stamps follow commit order.
func (l *Layer) finishRecord(o *meta.Object, size int64, body *bodyReader) error {
	sum, err := body.sums.object()
	if err != nil {
		return err
	}
	o.Size = size
	o.ETag = hex.EncodeToString(body.sum())
	o.Headers = withChecksum(o.Headers, sum)
	part := meta.Part{Number: 1, Size: size, ETag: o.ETag}
	if !sum.IsZero() {
		part.Checksums = map[string]string{sum.Algorithm.Lower(): sum.Value}
	}
	o.Parts = []meta.Part{part}
	l.stampRecord(o)
	return nil
}

func checkDigest(want, got []byte) error {
	if want != nil && !bytes.Equal(want, got) {
		return &DigestError{Want: want, Got: got}
	}
	return nil
}

// putInline stores a small object inside its metadata records: one durable
// write per peer and no shard files.
func (l *Layer) putInline(ctx context.Context, o *meta.Object, data []byte, body *bodyReader, opts PutOptions) (ObjectInfo, error) {
	if err := checkDigest(opts.ContentMD5, body.sum()); err != nil {
		return ObjectInfo{}, err
	}
	if err := l.checkPutCondition(ctx, o.Bucket, o.Key, opts); err != nil {
		return ObjectInfo{}, err
	}
	ec, err := l.coder(o.Code, o.BlockSize)
	if err != nil {
		return ObjectInfo{}, err
	}
	shards, err := ec.EncodeBytes(data)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("encode: %w", err)
	}
	if err := l.finishRecord(o, int64(len(data)), body); err != nil {
		return ObjectInfo{}, err
	}
	o.Inlined = true
	err = l.commitObject(ctx, o, make([]error, len(o.Distribution)), func(i int, rec *meta.Object) []string {
		rec.Inline = shards[i]
		return nil
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return l.infoOf(o), nil
}

// putStaged streams a large object into shard files, then commits.
func (l *Layer) putStaged(ctx context.Context, o *meta.Object, body *bodyReader, r io.Reader, opts PutOptions) (ObjectInfo, error) {
	ec, err := l.coder(o.Code, o.BlockSize)
	if err != nil {
		return ObjectInfo{}, err
	}
	res, err := l.stage(ctx, ec, o.Distribution, r, o.Code.WriteQuorum())
	if body.err != nil {
		return ObjectInfo{}, fmt.Errorf("read body: %w", body.err)
	}
	if err := stageFailure(ctx, err, o.Distribution, res, o.Code.WriteQuorum()); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkDigest(opts.ContentMD5, body.sum()); err != nil {
		return ObjectInfo{}, err
	}
	if err := l.checkPutCondition(ctx, o.Bucket, o.Key, opts); err != nil {
		return ObjectInfo{}, err
	}
	if err := l.finishRecord(o, res.size, body); err != nil {
		return ObjectInfo{}, err
	}
	err = l.commitObject(ctx, o, res.errs, func(i int, _ *meta.Object) []string {
		return []string{res.ids[i]}
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return l.infoOf(o), nil
}

// stageFailure reports a failed stage: the caller's cancellation as is,
// a QuorumError when too many peers fell away, else the encoder's error.
func stageFailure(ctx context.Context, err error, dist []meta.PeerID, res stageResult, need int) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("stage: %w", context.Cause(ctx))
	}
	if res.ok < need {
		return &QuorumError{Op: "stage", Need: need, Got: res.ok, PerPeer: stageErrors(dist, res)}
	}
	return err
}

// commitObject commits o on every peer of its distribution whose shard is
// ready (ready[i] == nil); prep fills shard i's copy and returns its
// staged files. See commitVersion.
func (l *Layer) commitObject(ctx context.Context, o *meta.Object, ready []error, prep func(i int, rec *meta.Object) []string) error {
	return l.commitVersion(ctx, "commit", o, ready, maxCommitAttempts, func(ctx context.Context, c ShardClient, rec *meta.Object) error {
		return c.Commit(ctx, rec, prep(rec.ShardIndex, rec))
	})
}

// maxCommitAttempts bounds how often a commit that lost to newer stamps is
// restamped and sent again: once is enough unless other gateways keep
// writing the key, ahead of this one's clock, as it retries.
const maxCommitAttempts = 3

// commitVersion sends version o with send to every peer of its
// distribution whose shard is ready (ready[i] == nil) and that this layer
// does not avoid while a write quorum remains without it (leaveOut), and
// succeeds once a
// write quorum accepted o itself. A peer refusing o as stale holds a newer
// stamp, behind which o would be invisible: that is no acknowledgement.
// When such refusals cost the quorum, the clock advances past the stamps
// they name and o is restamped and sent again (see hlc). Peers that took
// the earlier stamp then lack its staged shards or its upload and fail;
// repair brings them the new stamp. attempts bounds the sends: 1 for a
// commit no new stamp can help (a rewrite names the exact version it
// replaces, which a peer holding a newer one refuses whatever o's stamp).
func (l *Layer) commitVersion(ctx context.Context, op string, o *meta.Object, ready []error, attempts int,
	send func(ctx context.Context, c ShardClient, rec *meta.Object) error) error {
	if !asksAll(ctx) {
		ready = l.leaveOut(o.Distribution, ready, o.Code.WriteQuorum())
	}
	cut := &commitCut{l: l}
	for attempt := 1; ; attempt++ {
		rs := fanoutQuorum(ctx, l, o.Distribution, l.cfg.PeerTimeout, o.Code.WriteQuorum(), func(ctx context.Context, i int, c ShardClient) (struct{}, error) {
			if ready[i] != nil {
				return struct{}{}, ready[i]
			}
			if cut.holds(i) {
				<-ctx.Done()
				return struct{}{}, ctx.Err()
			}
			rec := *o
			rec.ShardIndex = i
			err := send(ctx, c, &rec)
			cut.done(err)
			return struct{}{}, err
		})
		err := l.settleWrite(op, o.Bucket, o.Key, o.Stamp, rs, o.Code.WriteQuorum())
		if err == nil {
			l.settleAcked(o, rs)
			return nil
		}
		if !l.observeStale(rs) || attempt >= attempts || ctx.Err() != nil {
			return err
		}
		lost := o.Stamp
		l.stampRecord(o)
		l.log.Debug().Str("bucket", o.Bucket).Str("key", o.Key).Stringer("lost", lost).Stringer("stamp", o.Stamp).
			Int("attempt", attempt+1).Msg("commit lost to newer stamps; retrying above them")
	}
}

// observeStale advances the clock past the stamps that stale refusals
// among rs name, and reports whether there were any.
func (l *Layer) observeStale(rs []reply[struct{}]) bool {
	seen := false
	for _, r := range rs {
		if held, ok := meta.HeldStamp(r.err); ok {
			l.observeStamp(held)
			seen = true
		}
	}
	return seen
}

// supersededBySelf counts the stale refusals of st that name a newer stamp
// of st's own writer. That writer's clock only moves forward, so the newer
// write was stamped after st's began: the two overlap in time, and st
// taking effect just before it is a valid order. Such a refusal is an
// acknowledgement; retrying would only fail, since the peers that took st
// have used its staged shards. A newer stamp of another writer may belong
// to a write that finished before st began (its clock ahead): that one
// st must beat, so it is no acknowledgement (see commitVersion).
func supersededBySelf(st meta.Stamp, rs []reply[struct{}]) int {
	n := 0
	for _, r := range rs {
		if held, ok := meta.HeldStamp(r.err); ok && held.Writer == st.Writer && st.Less(held) {
			n++
		}
	}
	return n
}

// settleWrite decides a fanned-out write: success with need acks, a
// sentinel when need peers agree on one, else a QuorumError. A stale
// refusal is no ack (see commitVersion) unless st's own writer superseded
// it (supersededBySelf). Successes short of every peer
// queue the object for repair, except on peers that hold a newer one.
func (l *Layer) settleWrite(op, bucket, key string, st meta.Stamp, rs []reply[struct{}], need int) error {
	t := tallyOf(rs)
	if t.ok+supersededBySelf(st, rs) >= need {
		if missed := t.without(meta.ErrStale); len(missed) > 0 {
			var shards []int
			for i, r := range rs {
				if _, ok := missed[r.peer]; ok {
					shards = append(shards, i)
				}
			}
			l.degradedWrite(op, bucket, key, st, shards, missed)
		}
		return nil
	}
	if t.count(meta.ErrBucketNotFound) > 0 {
		l.buckets.forget(bucket)
	}
	for _, s := range []error{meta.ErrBucketNotFound, meta.ErrUploadNotFound} {
		if n := t.count(s); n >= need || (n > 0 && n == len(t.errs) && t.ok == 0) {
			return fmt.Errorf("%s: %w", op, s)
		}
	}
	return t.failure(op, need)
}
