package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
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
		DeleteMarker:  o.DeleteMarker,
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

// readPart writes part bytes [off, off+length) to w. Every shard fetch
// of every GET goes through the fetch pool, so the policy chosen with
// --sched decides all of them and the pool's figures count all of them:
// the part is read as windows (see MaxPooledShard), each one read in the
// pool, decoded from memory and written. While one window is decoded and
// written the next is fetched, if the layer's window memory has room for
// it, so a large GET keeps its peers busy instead of stopping at each
// window's end; a GET thus holds at most two windows of chunks (k x
// FetchWindow, more only while a redundant policy's extra fetches end),
// and all GETs together about Config.WindowMemory.
func (l *Layer) readPart(ctx context.Context, v *version, ec *erasure.Coder, p meta.Part, off, length int64, w io.Writer) error {
	wins := windows(ec, p.Size, off, length, l.cfg.FetchWindow)
	fetch := l.fetcher(v, ec, p)
	ctx, cancel := context.WithCancel(ctx)
	bad := map[int]error{}
	var next *pendingWindow
	defer func() {
		cancel()
		if next != nil {
			wc, _ := next.wait(bad) // its fetches end before their buffers go back
			wc.release()
		}
		l.noteBad(v, p.Number, bad)
	}()
	k := v.obj.Code.K
	for i, win := range wins {
		cur := next
		next = nil
		if cur == nil {
			// Waiting for room holding none: see windowMemory.
			n, err := l.winMem.reserve(ctx, windowCost(k, win))
			if err != nil {
				return err
			}
			cur = l.startWindow(ctx, v, win, fetch, n)
		}
		if i+1 < len(wins) {
			if n := l.winMem.tryReserve(windowCost(k, wins[i+1])); n > 0 {
				next = l.startWindow(ctx, v, wins[i+1], fetch, n)
			}
		}
		wc, err := cur.wait(bad)
		if err == nil {
			err = decodeWindow(w, ec, p.Size, win, wc.got)
		}
		wc.release()
		if err != nil {
			return err
		}
	}
	return nil
}

// pendingWindow is a window being fetched.
type pendingWindow struct {
	done chan struct{}
	wc   *windowChunks
	err  error
}

// startWindow fetches win in the background, its buffers charged to the
// reserved bytes of window memory, which its windowChunks gives back.
func (l *Layer) startWindow(ctx context.Context, v *version, win window, fetch fetchFunc, reserved int64) *pendingWindow {
	pw := &pendingWindow{done: make(chan struct{}), wc: newWindowChunks(len(v.obj.Distribution), l.winMem, reserved)}
	go func() {
		defer close(pw.done)
		pw.err = l.fetchWindow(ctx, v, win, fetch, pw.wc)
	}()
	return pw
}

// wait returns what the window's fetches gathered, adding its failed
// shards to bad. The caller releases it.
func (pw *pendingWindow) wait(bad map[int]error) (*windowChunks, error) {
	<-pw.done
	maps.Copy(bad, pw.wc.bad)
	return pw.wc, pw.err
}

// decodeWindow writes win's bytes to w from the chunks fetched, which
// were verified as they arrived (a damaged one was a failed fetch the
// policy replaced), so they are decoded where they lie without a second
// pass.
func decodeWindow(w io.Writer, ec *erasure.Coder, size int64, win window, got [][]byte) error {
	err := ec.DecodeVerified(w, size, win.off, win.length, got)
	if errors.Is(err, erasure.ErrTooFewShards) {
		return fmt.Errorf("%w: %w", ErrQuorum, err)
	}
	return err
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
				l.recovered(peer)
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
			l.stall(peer, "a shard read")
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

// noteBad reports the shards a read could not use: their fetch failed
// or their bytes did not verify.
func (l *Layer) noteBad(v *version, part int, bad map[int]error) {
	if len(bad) == 0 {
		return
	}
	o := v.obj
	shards := make([]int, 0, len(bad))
	for shard, err := range bad {
		shards = append(shards, shard)
		ev := l.log.Warn().Str("bucket", o.Bucket).Str("key", o.Key).Int("shard", shard).Int("part", part).Err(err)
		if shard >= 0 && shard < len(o.Distribution) {
			ev = ev.Str("peer", string(o.Distribution[shard]))
		}
		ev.Msg("shard unreadable, read degraded")
	}
	l.queueRepair(RepairItem{Bucket: o.Bucket, Key: o.Key, Stamp: o.Stamp, Shards: shards, Reason: "bad shard on read"})
}
