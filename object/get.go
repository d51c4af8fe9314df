package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"tessera/checksum"
	"tessera/erasure"
	"tessera/meta"
)

// GetObject resolves the current version of bucket/key, calls start with
// its info and streams the bytes start asks for to the writer it returns.
// Bytes are verified before they are written; a failure after the first
// byte is returned and the caller must abort the response.
func (l *Layer) GetObject(ctx context.Context, bucket, key string, start func(ObjectInfo) (w io.Writer, off, length int64, err error)) error {
	v, err := l.resolveToRead(ctx, bucket, key)
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", bucket, key, err)
	}
	w, off, length, err := start(l.infoOf(v.obj))
	if err != nil {
		return err
	}
	off, length, err = clampRange(v.obj.Size, off, length)
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", bucket, key, err)
	}
	if err := l.readVersion(ctx, v, w, off, length); err != nil {
		return fmt.Errorf("get %s/%s: %w", bucket, key, err)
	}
	return nil
}

// HeadObject returns the info of the current version.
func (l *Layer) HeadObject(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	v, err := l.resolve(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("head %s/%s: %w", bucket, key, err)
	}
	return l.infoOf(v.obj), nil
}

// clampRange checks a byte range against the object size; length -1 means
// to the end, and a range running past the end is cut short (S3 does so).
func clampRange(size, off, length int64) (int64, int64, error) {
	switch {
	case off < 0 || length < -1:
		return 0, 0, fmt.Errorf("%w: offset %d length %d", ErrInvalidRange, off, length)
	case off > size || (off == size && size > 0):
		return 0, 0, fmt.Errorf("%w: offset %d of %d bytes", ErrInvalidRange, off, size)
	case length == -1 || off+length > size:
		length = size - off
	}
	return off, length, nil
}

func (l *Layer) infoOf(o *meta.Object) ObjectInfo {
	sum := storedChecksum(o.Headers)
	return ObjectInfo{
		Bucket:        o.Bucket,
		Key:           o.Key,
		Size:          o.Size,
		ETag:          o.ETag,
		ModTime:       o.ModTime,
		ContentType:   o.ContentType,
		UserMeta:      o.UserMeta,
		Headers:       o.Headers,
		StorageClass:  classOrStandard(o.StorageClass),
		Parts:         max(len(o.Parts), 1),
		PartSizes:     partSizes(o),
		Checksum:      sum,
		PartChecksums: partSums(o, sum.Algorithm),
	}
}

// partSums is each part's checksum of algorithm alg.
func partSums(o *meta.Object, alg checksum.Algorithm) []string {
	if alg == "" {
		return nil
	}
	parts := partsOf(o)
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Checksums[alg.Lower()]
	}
	return out
}

// partsOf lists an object's erasure streams; records always carry them,
// but a record without is one single part.
func partsOf(o *meta.Object) []meta.Part {
	if len(o.Parts) > 0 {
		return o.Parts
	}
	return []meta.Part{{Number: 1, Size: o.Size, ETag: o.ETag}}
}

// readVersion writes bytes [off, off+length) of v to w, part by part.
func (l *Layer) readVersion(ctx context.Context, v *version, w io.Writer, off, length int64) error {
	if length == 0 {
		return nil
	}
	ec, err := l.coder(v.obj.Code, v.obj.BlockSize)
	if err != nil {
		return err
	}
	end := off + length
	var base int64
	for _, p := range partsOf(v.obj) {
		pEnd := base + p.Size
		if off < pEnd && end > base {
			pOff := max(off, base) - base
			pLen := min(end, pEnd) - base - pOff
			if err := l.readPart(ctx, v, ec, p, pOff, pLen, w); err != nil {
				return fmt.Errorf("part %d: %w", p.Number, err)
			}
		}
		base = pEnd
	}
	return nil
}

func (l *Layer) readPart(ctx context.Context, v *version, ec *erasure.Coder, p meta.Part, off, length int64, w io.Writer) error {
	if l.cfg.Pool != nil && !v.obj.Inlined {
		return l.readPooled(ctx, v, ec, p, off, length, w)
	}
	return l.readDirect(ctx, v, ec, p, off, length, w)
}

// readDirect reads one part opening shards in readOrder's order, outside
// any fetch pool.
func (l *Layer) readDirect(ctx context.Context, v *version, ec *erasure.Coder, p meta.Part, off, length int64, w io.Writer) error {
	_, shardLen := ec.ShardRange(p.Size, off, length)
	order := l.readOrder(v, shardLen)
	stats, err := ec.Decode(ctx, w, p.Size, off, length, order, l.opener(v, p.Number))
	l.noteBad(v, p.Number, stats)
	if errors.Is(err, erasure.ErrTooFewShards) {
		return fmt.Errorf("%w: %w", ErrQuorum, err)
	}
	return err
}

// readOrder is the scheduler's choice of shards, regrouped by how likely
// each peer is to hold this version: first those seen holding it or not
// asked in time (the scheduler's order among them stands), then those
// whose metadata read failed, and last those that answered with another
// version (they may still keep this version's shards, so they remain a
// last resort rather than being dropped).
func (l *Layer) readOrder(v *version, shardBytes int64) []int {
	o := v.obj
	var pref []int
	if l.cfg.Scheduler != nil {
		pref = l.cfg.Scheduler.Order(o.Distribution, o.Code.K, shardBytes)
	}
	return groupOrder(v, l.avoidLast(o.Distribution, pref))
}

// avoidLast moves the shards of peers this layer avoids to the end of
// pref, so they are read only when the others do not suffice.
func (l *Layer) avoidLast(dist []meta.PeerID, pref []int) []int {
	if len(pref) == 0 {
		pref = make([]int, len(dist))
		for i := range pref {
			pref[i] = i
		}
	}
	var good, bad []int
	for _, i := range pref {
		if i >= 0 && i < len(dist) && l.avoided(dist[i]) {
			bad = append(bad, i)
		} else {
			good = append(good, i)
		}
	}
	return append(good, bad...)
}

// groupOrder puts pref first, then every other shard, regrouped as
// readOrder says.
func groupOrder(v *version, pref []int) []int {
	n := len(v.obj.Distribution)
	seen := make([]bool, n)
	var likely, failed, absent []int
	add := func(i int) {
		if i < 0 || i >= n || seen[i] {
			return
		}
		seen[i] = true
		switch {
		case v.absent[i]:
			absent = append(absent, i)
		case v.failed[i]:
			failed = append(failed, i)
		default:
			likely = append(likely, i)
		}
	}
	for _, i := range pref {
		add(i)
	}
	for i := range n {
		add(i)
	}
	return append(append(likely, failed...), absent...)
}

// opener returns the decoder's source of shard bytes for one part.
func (l *Layer) opener(v *version, part int) func(context.Context, int, int64, int64) (io.ReadCloser, error) {
	o := v.obj
	return func(ctx context.Context, shard int, off, length int64) (io.ReadCloser, error) {
		if o.Inlined {
			return l.openInline(ctx, v, shard, off, length)
		}
		peer := o.Distribution[shard]
		obs := l.observe(peer, length)
		observed := func(err error, n int64) {
			if err == nil && n > 0 {
				l.health.recovered(peer)
			}
			obs(err, n)
		}
		sctx, cancel := context.WithCancel(ctx)
		// A client's read gives a silent stream StallAfter and marks the
		// peer; a repair's or move's read (quiet) competes with client
		// traffic on a loaded machine and has no one waiting, so it keeps
		// the full PeerTimeout and leaves the peer's health alone.
		stallAfter, open := l.cfg.StallAfter, l.health.deadline(peer, l.cfg.PeerTimeout)
		stalled := func() {
			l.health.stall(peer)
			cancel()
		}
		if isQuiet(ctx) {
			stallAfter, open, stalled = l.cfg.PeerTimeout, l.cfg.PeerTimeout, cancel
		}
		t := time.AfterFunc(open, stalled)
		rc, err := call(sctx, l, peer, 0, func(ctx context.Context, c ShardClient) (io.ReadCloser, error) {
			return c.ReadShard(ctx, o.Bucket, o.Key, o.Stamp, part, off, length)
		})
		t.Stop()
		if err != nil {
			cancel()
			observed(err, 0)
			return nil, fmt.Errorf("read shard %d from %s: %w", shard, peer, err)
		}
		return &stallReader{rc: &observedReader{rc: rc, done: observed}, d: stallAfter, stalled: stalled, cancel: cancel}, nil
	}
}

// openInline serves a shard of an inlined object from its record, reading
// the record again from a peer whose copy the metadata read did not see.
func (l *Layer) openInline(ctx context.Context, v *version, shard int, off, length int64) (io.ReadCloser, error) {
	o := v.obj
	rec := v.holders[shard]
	if rec == nil {
		peer := o.Distribution[shard]
		r, err := call(ctx, l, peer, l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (*meta.Object, error) {
			return c.ReadMeta(ctx, o.Bucket, o.Key)
		})
		if err == nil {
			err = checkRecord(r, peer, o.Bucket, o.Key)
		}
		if err == nil && r.Stamp != o.Stamp {
			err = fmt.Errorf("holds version %s, want %s", r.Stamp, o.Stamp)
		}
		if err != nil {
			return nil, fmt.Errorf("inline shard %d from %s: %w", shard, peer, err)
		}
		rec = r
	}
	if off < 0 || length < 0 || off+length > int64(len(rec.Inline)) {
		return nil, fmt.Errorf("inline shard %d: range %d+%d of %d bytes", shard, off, length, len(rec.Inline))
	}
	return io.NopCloser(bytes.NewReader(rec.Inline[off : off+length])), nil
}

// noteBad reports shards the decoder had to skip.
func (l *Layer) noteBad(v *version, part int, st erasure.DecodeStats) {
	if len(st.Bad) == 0 {
		return
	}
	o := v.obj
	shards := make([]int, 0, len(st.Bad))
	for shard, err := range st.Bad {
		shards = append(shards, shard)
		ev := l.log.Warn().Str("bucket", o.Bucket).Str("key", o.Key).Int("shard", shard).Int("part", part).Err(err)
		if shard >= 0 && shard < len(o.Distribution) {
			ev = ev.Str("peer", string(o.Distribution[shard]))
		}
		ev.Msg("shard unreadable, read degraded")
	}
	l.queueRepair(RepairItem{Bucket: o.Bucket, Key: o.Key, Stamp: o.Stamp, Shards: shards, Reason: "bad shard on read"})
}
