package object

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tessera/checksum"
	"tessera/meta"
)

// ListObjects returns one page of bucket's live keys and common prefixes
// in key order. It merges the sorted listings of the peers, keeping the
// newest stamp per key and hiding tombstones: first of a read set, then,
// when that does not decide the page, of every peer (listset.go),
// tolerating as many failed peers as the default code has parity.
// MaxKeys 0 yields an empty page; a negative MaxKeys, or one over
// DefaultMaxKeys, means DefaultMaxKeys.
func (l *Layer) ListObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	res, err := l.listObjects(ctx, bucket, opts)
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
	}
	return res, nil
}

func (l *Layer) listObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	if err := l.requireBucket(ctx, bucket); err != nil {
		return ListResult{}, err
	}
	limit := opts.MaxKeys
	if limit < 0 || limit > DefaultMaxKeys {
		limit = DefaultMaxKeys
	}
	if limit == 0 {
		return ListResult{}, nil
	}
	if set, unasked := l.listReadSet(); unasked > 0 {
		m := l.newMerger(bucket, opts, limit+1)
		m.readFrom(set, unasked)
		res, err := m.page(ctx, limit)
		if err == nil || ctx.Err() != nil {
			return res, err
		}
		// Not decided by the read set, or one of its peers failed: ask
		// every peer, as the listing's failure rules are written for.
	}
	return l.newMerger(bucket, opts, limit+1).page(ctx, limit)
}

// page merges up to limit items.
func (m *merger) page(ctx context.Context, limit int) (ListResult, error) {
	var res ListResult
	for {
		e, prefix, ok, err := m.next(ctx)
		if err != nil {
			return ListResult{}, err
		}
		if !ok {
			return res, nil
		}
		if len(res.Objects)+len(res.Prefixes) == limit {
			res.IsTruncated = true
			return res, nil
		}
		if prefix != "" {
			res.Prefixes = append(res.Prefixes, prefix)
			res.NextAfter = prefix
			continue
		}
		res.Objects = append(res.Objects, entryInfo(m.bucket, e))
		res.NextAfter = e.Key
	}
}

// entryInfo is a listing line as an ObjectInfo. Its Checksum names the
// algorithm and type only: a listing carries no checksum value.
func entryInfo(bucket string, e meta.Entry) ObjectInfo {
	return ObjectInfo{Bucket: bucket, Key: e.Key, Size: e.Size, ETag: e.ETag, ModTime: e.ModTime,
		StorageClass: classOrStandard(e.StorageClass), Parts: partsInETag(e.ETag),
		Checksum:     ChecksumInfo{Algorithm: checksum.Algorithm(e.ChecksumAlgorithm), Type: checksum.Type(e.ChecksumType)},
		DeleteMarker: e.DeleteMarker}
}

// partsInETag reads the part count of a multipart ETag ("hex-N"), which
// is all a listing line says about parts.
func partsInETag(etag string) int {
	if _, n, ok := strings.Cut(etag, "-"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return v
		}
	}
	return 1
}

// merger k-way merges the peers' listings of one bucket.
//
// With a delimiter the peers fold (meta.FoldEntries): under each common
// prefix a peer sends its keys up to its first live one, marked Folded,
// and skips the rest. Everything a peer holds up to its fold point is in
// the merge, so up to the first fold point any peer reached, each key's
// newest record is known exactly: a key live there shows the prefix. If
// that first folded key turns out deleted (a newer tombstone on another
// peer), what the peers skipped after it is unknown, and the prefix is
// settled by an exact listing of it alone (resolve). That takes a delete
// that missed a peer; otherwise a prefix costs each peer one seek.
type merger struct {
	l         *Layer
	bucket    string
	prefix    string
	delimiter string
	after     string // items must sort after this
	batch     int
	tolerate  int
	failures  map[meta.PeerID]error
	cursors   []*cursor
	// skip is the last common prefix reached: every key under it is
	// folded into it and dropped.
	skip string
	// unsure is a common prefix whose first folded key was deleted, to be
	// settled by resolve once the merge has passed it; unsureAfter is
	// that key.
	unsure, unsureAfter string
	// pending is an item popped while passing unsure, returned next.
	pending *popped
	// deleted also yields keys whose newest record is a tombstone.
	deleted bool
	// unasked is how many peers a listing from a read set leaves out
	// (listset.go): it fails with errUndecided rather than decide a key
	// or a failure without them.
	unasked int
	lines   []meta.Entry // pop's scratch: one key's line from each peer
}

// popped is one merged key: its newest entry, and whether a peer's copy
// was its fold point while the newest record is a tombstone.
type popped struct {
	e          meta.Entry
	foldedDead bool
}

// cursor is one peer's position in its listing.
type cursor struct {
	peer  meta.PeerID
	buf   []meta.Entry
	after string // last key fetched
	done  bool
}

func (l *Layer) newMerger(bucket string, opts ListOptions, batch int) *merger {
	m := &merger{
		l: l, bucket: bucket, prefix: opts.Prefix, delimiter: opts.Delimiter, after: opts.After,
		batch: min(max(batch, 64), DefaultMaxKeys), tolerate: l.cfg.DefaultCode.M,
		failures: map[meta.PeerID]error{},
	}
	if l.listBatch > 0 {
		m.batch = l.listBatch
	}
	for _, p := range l.cfg.Cluster.Peers() {
		m.cursors = append(m.cursors, &cursor{peer: p, after: opts.After})
	}
	return m
}

// readFrom makes m list from the given read set only, which leaves out
// unasked peers.
func (m *merger) readFrom(set []meta.PeerID, unasked int) {
	m.cursors = m.cursors[:0]
	for _, p := range set {
		m.cursors = append(m.cursors, &cursor{peer: p, after: m.after})
	}
	m.unasked, m.tolerate = unasked, 0
}

// next returns the next item after m.after: a live entry, or a common
// prefix (when prefix != ""). ok is false once the listing is exhausted.
// A common prefix is emitted at its first live key, so prefixes holding
// only tombstones never show.
func (m *merger) next(ctx context.Context) (e meta.Entry, prefix string, ok bool, err error) {
	for {
		p, ok, err := m.pop(ctx)
		if err != nil {
			return meta.Entry{}, "", false, err
		}
		if m.unsure != "" && (!ok || !strings.HasPrefix(p.e.Key, m.unsure)) {
			cp, live, err := m.resolve(ctx)
			if err != nil {
				return meta.Entry{}, "", false, err
			}
			if live {
				if ok {
					m.pending = &p
				}
				return meta.Entry{}, cp, true, nil
			}
			// No key under cp is live: what a peer that does not fold
			// still sends under it is stale.
			m.skip = cp
		}
		if !ok {
			return meta.Entry{}, "", false, nil
		}
		e := p.e
		if m.unsure != "" || e.Key <= m.after || (m.skip != "" && strings.HasPrefix(e.Key, m.skip)) {
			continue
		}
		cp := m.commonPrefix(e.Key)
		if e.Deleted && !m.deleted {
			if p.foldedDead && cp > m.after {
				m.unsure, m.unsureAfter = cp, e.Key
			}
			continue
		}
		if cp != "" {
			m.skip = cp
			if cp <= m.after {
				continue // returned on an earlier page
			}
			m.after = cp
			return meta.Entry{}, cp, true, nil
		}
		m.after = e.Key
		return e, "", true, nil
	}
}

// resolve settles m.unsure by listing its keys after m.unsureAfter
// exactly, without folding, until one is live. It reports the prefix and
// whether it is to be emitted, which then makes it the one skipped.
func (m *merger) resolve(ctx context.Context) (string, bool, error) {
	cp, after := m.unsure, m.unsureAfter
	m.unsure, m.unsureAfter = "", ""
	sub := m.l.newMerger(m.bucket, ListOptions{Prefix: cp, After: after}, 64)
	_, _, live, err := sub.next(ctx)
	if err != nil || !live {
		return cp, false, err
	}
	m.skip, m.after = cp, cp
	return cp, true, nil
}

func (m *merger) commonPrefix(key string) string {
	return meta.CommonPrefix(key, m.prefix, m.delimiter)
}

// pop removes the smallest key from every peer's head and returns its
// newest entry.
func (m *merger) pop(ctx context.Context) (popped, bool, error) {
	if p := m.pending; p != nil {
		m.pending = nil
		return *p, true, nil
	}
	if err := m.refill(ctx); err != nil {
		return popped{}, false, err
	}
	var best *meta.Entry
	for _, c := range m.cursors {
		if len(c.buf) > 0 && (best == nil || c.buf[0].Key < best.Key) {
			best = &c.buf[0]
		}
	}
	if best == nil {
		return popped{}, false, nil
	}
	key, folded := best.Key, false
	es := m.lines[:0]
	for _, c := range m.cursors {
		if len(c.buf) > 0 && c.buf[0].Key == key {
			es = append(es, c.buf[0])
			folded = folded || c.buf[0].Folded
			c.buf = c.buf[1:]
		}
	}
	m.lines = es
	if m.unasked > 0 && !m.decides(es) {
		return popped{}, false, errUndecided
	}
	out := newestEntry(es)
	if !m.deleted {
		// What a read would find; the scanner's walk takes the newest
		// record as it is, since it completes writes and deletes.
		out = m.l.listedVersion(es, len(m.failures))
	}
	return popped{e: out, foldedDead: folded && out.Deleted}, true, nil
}

func newestEntry(es []meta.Entry) meta.Entry {
	out := es[0]
	for _, e := range es[1:] {
		if out.Stamp.Less(e.Stamp) {
			out = e
		}
	}
	return out
}

// listKeys returns up to limit keys of bucket after after, in key order,
// with the newest entry any peer holds, tombstones included: the repair
// scanner's walk, which must reach deleted keys too, since a delete made
// while peers were down is completed the way an object is repaired.
// more reports that keys may follow the last one returned.
func (l *Layer) listKeys(ctx context.Context, bucket, after string, limit int) (es []meta.Entry, more bool, err error) {
	if err := l.requireBucket(ctx, bucket); err != nil {
		return nil, false, fmt.Errorf("list %s: %w", bucket, err)
	}
	m := l.newMerger(bucket, ListOptions{After: after}, limit)
	m.deleted = true
	for len(es) < limit {
		e, _, ok, err := m.next(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("list %s: %w", bucket, err)
		}
		if !ok {
			return es, false, nil
		}
		es = append(es, e)
	}
	return es, true, nil
}

// refill fetches the next batch for every live cursor that ran dry, in
// parallel: the smallest key is only known once every peer has a head.
func (m *merger) refill(ctx context.Context) error {
	var dry []*cursor
	for _, c := range m.cursors {
		if len(c.buf) == 0 && !c.done {
			dry = append(dry, c)
		}
	}
	if len(dry) == 0 {
		return nil
	}
	peers := make([]meta.PeerID, len(dry))
	for i, c := range dry {
		peers[i] = c.peer
		if m.skip != "" {
			// Jump past the folded prefix.
			c.after = max(c.after, meta.PastPrefix(m.skip))
		}
	}
	// A listing tolerates m failed peers, so a round needs answers from
	// the rest only: a stalled peer within that budget is left out rather
	// than waited on for its whole timeout on every page (and on every
	// read of a versioned key's latest version, which lists).
	need := max(len(dry)-max(m.tolerate-len(m.failures), 0), 1)
	rs := fanoutQuorum(ctx, m.l, peers, m.l.cfg.PeerTimeout, need, func(ctx context.Context, i int, sc ShardClient) ([]meta.Entry, error) {
		return sc.List(ctx, m.bucket, m.prefix, dry[i].after, m.batch, m.fold())
	})
	bucketGone := m.absorb(dry, rs)
	if m.unasked > 0 && bucketGone > 0 {
		return errUndecided
	}
	if len(m.failures) > m.tolerate {
		return &QuorumError{Op: "list", Need: len(m.cursors) - m.tolerate,
			Got: len(m.cursors) - len(m.failures), PerPeer: m.failures}
	}
	if bucketGone > 0 && m.l.bucketMissing(ctx, m.bucket) {
		return ErrBucketNotFound
	}
	return nil
}

// fold is the delimiter the peers fold by: none for the repair scanner's
// walk, which needs every key.
func (m *merger) fold() string {
	if m.deleted {
		return ""
	}
	return m.delimiter
}

// absorb takes in one round of peer batches and returns how many peers
// said the bucket does not exist. A peer without the bucket holds none of
// its objects; a failed peer is out of the listing for good.
func (m *merger) absorb(dry []*cursor, rs []reply[[]meta.Entry]) int {
	bucketGone := 0
	for i, r := range rs {
		c := dry[i]
		switch {
		case r.err != nil && isBucketNotFound(r.err):
			c.done, bucketGone = true, bucketGone+1
		case r.err != nil:
			c.done = true
			m.failures[c.peer] = r.err
		default:
			c.buf = m.clean(r.val, c.after)
			c.done = len(r.val) < m.batch || len(c.buf) == 0
			if len(c.buf) > 0 {
				last := c.buf[len(c.buf)-1]
				c.after = last.Key
				if cp := m.commonPrefix(last.Key); last.Folded && cp != "" {
					c.after = meta.PastPrefix(cp) // the peer seeks there next
				}
			}
		}
	}
	return bucketGone
}

// clean keeps a peer's batch to what was asked, sorted, so a misbehaving
// peer cannot break the merge order.
func (m *merger) clean(es []meta.Entry, after string) []meta.Entry {
	out := es[:0:0]
	for _, e := range es {
		if e.Key > after && strings.HasPrefix(e.Key, m.prefix) {
			out = append(out, e)
		}
	}
	if !slices.IsSortedFunc(out, func(a, b meta.Entry) int { return strings.Compare(a.Key, b.Key) }) {
		slices.SortFunc(out, func(a, b meta.Entry) int { return strings.Compare(a.Key, b.Key) })
	}
	return out
}
