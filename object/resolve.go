package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"tessera/meta"
)

// version is the resolved current version of a key.
type version struct {
	obj *meta.Object // one copy of the record
	// holders are the copies of this version that were read, by shard.
	holders map[int]*meta.Object
	// absent are the shards whose peer answered with another version or
	// none: they are unlikely to serve this version's bytes.
	absent map[int]bool
	// failed are the shards whose peer's metadata read failed.
	failed map[int]bool
	// replacing reports that some peer already holds a newer record: a
	// write is replacing this version as it is read.
	replacing bool
}

// metaAnswer is one peer's answer to ReadVersions: its current record
// and the older versions it keeps.
type metaAnswer struct {
	peer meta.PeerID
	obj  *meta.Object
	kept []*meta.Object
	err  error
}

// copyOf returns the peer's copy of version st of shard i, current or
// kept, nil when it holds none.
func (a metaAnswer) copyOf(st meta.Stamp, i int) *meta.Object {
	if a.obj != nil && a.obj.Stamp == st && a.obj.ShardIndex == i {
		return a.obj
	}
	for _, k := range a.kept {
		if k.Stamp == st && k.ShardIndex == i {
			return k
		}
	}
	return nil
}

// answered reports whether the peer gave a usable answer: a record, or
// the knowledge that it has none. Failures and corrupt records do not
// count; such a peer is as good as missing.
func (a metaAnswer) answered() bool {
	return a.obj != nil || errors.Is(a.err, meta.ErrNotFound) || errors.Is(a.err, meta.ErrBucketNotFound)
}

// errPending is decide's signal that pending peers may change the outcome.
var errPending = errors.New("pending")

// errInFlux is decide's verdict on a key that writes are changing under
// the read: no version is settled, yet the records show one that may be
// acknowledged (see decide). Asking again shortly settles it.
var errInFlux = errors.New("versions of the key in flux")

// resolve finds the current version of bucket/key: the newest stamp that
// at least k peers hold, provided enough of its peers, and of every
// layout's placement of its code, answered that no newer write of its code
// could be missed. A newer stamp with too few copies is a write that never
// reached its quorum (a crashed PUT) and is passed over unless the missing
// peers could still hold enough of it, in which case the answer is
// ErrQuorum rather than a possibly stale version.
// Not-found needs answers covering the write quorums of every code in use,
// and is never the answer while a version may be acknowledged: a key
// whose records show versions in flux (an overwrite or delete landing as
// the records are read) is read again after a short wait, for up to
// Config.SettleWait, and is ErrQuorum if it does not settle.
//
// As in MinIO, a version's own code sets the read quorum: a newer write in
// a narrower class whose every copy sits on unanswering peers can go
// unseen. Demanding coverage of every class on every read would instead
// let one small class make all keys unreadable whenever two of its peers
// are down.
func (l *Layer) resolve(ctx context.Context, bucket, key string) (*version, error) {
	q, err := l.querySet(bucket, key)
	if err != nil {
		return nil, err
	}
	v, noBucket, err := l.readSettled(ctx, q, bucket, key)
	if err != nil {
		return nil, err
	}
	if v == nil || v.obj.Deleted {
		if noBucket {
			l.buckets.forget(bucket) // a peer says so: do not trust the cache
		}
		if errors.Is(l.requireBucket(ctx, bucket), ErrBucketNotFound) {
			return nil, ErrBucketNotFound
		}
		return nil, ErrObjectNotFound
	}
	return v, nil
}

// Backoff between metadata reads of a key in flux: the commits of one
// write land on its peers within milliseconds of each other.
const (
	settleFirstWait = 2 * time.Millisecond
	settleMaxWait   = 50 * time.Millisecond
)

// readSettled is readMeta that reads again while the key is in flux, with
// a growing pause, for up to SettleWait; then it fails with ErrQuorum.
func (l *Layer) readSettled(ctx context.Context, q querySet, bucket, key string) (*version, bool, error) {
	deadline := time.Now().Add(l.cfg.SettleWait)
	wait := settleFirstWait
	for {
		v, noBucket, err := l.readMeta(ctx, q, bucket, key)
		if !errors.Is(err, errInFlux) || time.Now().Add(wait).After(deadline) {
			return v, noBucket, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, noBucket, fmt.Errorf("read meta: %w", context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, settleMaxWait)
	}
}

// readMeta asks the peers of q in parallel, in two phases for a client
// read (metaPhases): k peers of each placement first, every other peer,
// those this layer avoids too, when those do not settle the read or are
// slow to answer. It decides as soon as the answers so far settle it.
// The calls still running are left to finish in the background for a
// short grace (lateGrace) before they are cancelled: a cancelled call
// closes its connection, and the next call to that peer would pay a new
// TLS handshake, while most late answers arrive within milliseconds.
// A nil version means no live or deleted version exists; noBucket reports
// that some peer answered it has no such bucket.
func (l *Layer) readMeta(ctx context.Context, q querySet, bucket, key string) (v *version, noBucket bool, err error) {
	// The calls outlive ctx by at most the grace; until the decision,
	// ctx ending cancels them.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	start := time.Now()
	ch := make(chan metaAnswer, len(q.peers))
	asked := 0
	ask := func(peers []meta.PeerID) {
		asked += len(peers)
		for _, id := range peers {
			go func() { ch <- l.readVersions(cctx, id, bucket, key) }()
		}
	}
	first, rest := l.metaPhases(ctx, q)
	ask(first)
	hedge := time.NewTimer(l.metaHedge())
	defer hedge.Stop()
	askRest := func() {
		ask(rest)
		rest = nil
	}
	answers := map[meta.PeerID]metaAnswer{}
	err = errPending
	got := 0
	for got < asked && err == errPending {
		var a metaAnswer
		select {
		case a = <-ch:
		case <-hedge.C:
			askRest()
			continue
		}
		got++
		if a.err == nil {
			// Writes of this key through this gateway stamp above it.
			l.observeStamp(a.obj.Stamp)
		} else {
			a.obj, a.kept = nil, nil
		}
		noBucket = noBucket || isBucketNotFound(a.err)
		answers[a.peer] = a
		v, err = decide(q, answers)
		if err == errPending && got == asked && len(rest) > 0 {
			askRest()
		}
	}
	stop()
	if err == nil {
		l.noteMetaPhase(time.Since(start))
	}
	go l.drainLate(ch, asked-got, l.lateGrace(start), cancel)
	switch err {
	case errPending:
		err = quorumOf("read meta", q, answers)
	case errInFlux:
		err = fmt.Errorf("%w: %w", quorumOf("read meta", q, answers), errInFlux)
	}
	if err != nil {
		return nil, noBucket, fmt.Errorf("read meta: %w", refusedOr(err, answers))
	}
	if !isQuiet(ctx) {
		l.noteMissing(bucket, key, v, answers)
	}
	l.settleSeen(v, answers)
	return v, noBucket, nil
}

// readVersions asks one peer for its records of the key. A kept record
// that does not describe the key or this peer's shard is left out, as a
// damaged copy would be; a bad current record fails the answer.
func (l *Layer) readVersions(ctx context.Context, id meta.PeerID, bucket, key string) metaAnswer {
	os, err := call(ctx, l, id, l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) ([]*meta.Object, error) {
		return c.ReadVersions(ctx, bucket, key)
	})
	return answerOf(id, bucket, key, os, err)
}

// answerOf checks a peer's ReadVersions answer (see readVersions).
func answerOf(id meta.PeerID, bucket, key string, os []*meta.Object, err error) metaAnswer {
	if err == nil && len(os) == 0 {
		err = fmt.Errorf("%w: no record in the answer", meta.ErrCorrupt)
	}
	if err != nil {
		return metaAnswer{peer: id, err: err}
	}
	if err := checkRecord(os[0], id, bucket, key); err != nil {
		return metaAnswer{peer: id, err: err}
	}
	a := metaAnswer{peer: id, obj: os[0]}
	for _, o := range os[1:] {
		if checkRecord(o, id, bucket, key) == nil && o.Stamp.Less(a.obj.Stamp) {
			a.kept = append(a.kept, o)
		}
	}
	return a
}

// lateGrace is how long the metadata calls still running when a read is
// decided may go on: as long again as the decision took, between 20 ms
// and StallAfter.
func (l *Layer) lateGrace(start time.Time) time.Duration {
	return min(max(time.Since(start), 20*time.Millisecond), l.cfg.StallAfter)
}

// drainLate takes the n answers still to come on ch, noting their stamps,
// and cancels the calls not answered within grace.
func (l *Layer) drainLate(ch <-chan metaAnswer, n int, grace time.Duration, cancel context.CancelFunc) {
	defer cancel()
	t := time.NewTimer(grace)
	defer t.Stop()
	for ; n > 0; n-- {
		var a metaAnswer
		select {
		case a = <-ch:
		case <-t.C:
			cancel()
			a = <-ch
		}
		if a.err == nil {
			l.observeStamp(a.obj.Stamp)
		}
	}
}

// checkRecord rejects a record that does not describe the asked key or
// this peer's shard; a peer bug must not steer the read.
func checkRecord(o *meta.Object, id meta.PeerID, bucket, key string) error {
	switch {
	case o == nil:
		return fmt.Errorf("%w: nil record", meta.ErrCorrupt)
	case o.Bucket != bucket || o.Key != key:
		return fmt.Errorf("%w: record of %s/%s", meta.ErrCorrupt, o.Bucket, o.Key)
	case !o.Code.Valid() || len(o.Distribution) != o.Code.N():
		return fmt.Errorf("%w: code %s over %d peers", meta.ErrCorrupt, o.Code, len(o.Distribution))
	case o.ShardIndex < 0 || o.ShardIndex >= len(o.Distribution) || o.Distribution[o.ShardIndex] != id:
		return fmt.Errorf("%w: shard %d is not held by %s", meta.ErrCorrupt, o.ShardIndex, id)
	}
	return nil
}

// decide applies the read rule to the answers so far. It returns
// errPending while peers yet to answer could change the outcome, and
// errInFlux when the answers show writes changing the key under the read:
// either a version may be committed out of sight while another version
// was seen too, or no version is readable although one may be
// acknowledged — its peers holding it or a newer record make a write
// quorum, so newer writes not yet settled have replaced part of it. A
// quorum of peers holding some version of the key is not an absent key.
func decide(q querySet, answers map[meta.PeerID]metaAnswer) (*version, error) {
	pending := len(q.peers) - len(answers)
	missing := func(p meta.PeerID) bool { a, ok := answers[p]; return !ok || !a.answered() }
	groups := byStampDesc(answers)
	stuck := func() error {
		switch {
		case pending > 0:
			return errPending
		case len(groups) > 1:
			return errInFlux
		}
		return quorumOf("read meta", q, answers)
	}
	answered := func(p meta.PeerID) bool { return !missing(p) }
	for _, group := range groups {
		o := group[0]
		code := o.Code
		// Distinct shards: while an object moves, one shard may have a
		// copy on its old peer and on its new one.
		if distinctShards(group) >= code.K {
			if !q.ofCode(code, o.Distribution).covered(answered) {
				return nil, stuck()
			}
			return versionOf(group, answers), nil
		}
		lost := 0
		for _, p := range o.Distribution {
			if missing(p) {
				lost++
			}
		}
		if len(group)+lost >= code.WriteQuorum() {
			return nil, stuck()
		}
	}
	if !q.covered(answered) {
		return nil, stuck()
	}
	for _, group := range groups {
		if heldOrReplaced(group[0], answers) {
			return nil, errInFlux
		}
	}
	return nil, nil
}

// ofCode is the part of q that must answer before a version of code c
// held on dist is read as the current one: dist, and every placement of
// c in q. A newer write of c went to the placement of the layout current
// when it was made, which may not be dist: an object not yet moved off an
// older layout is overwritten or deleted on the current one. Were dist
// alone enough, the older layout's peers answering first would settle
// the read on the replaced version, and a delete would tombstone that one
// and leave the newer version live.
func (q querySet) ofCode(c meta.Code, dist []meta.PeerID) querySet {
	out := querySet{codes: []codeSet{{c, dist}}}
	for _, cs := range q.codes {
		if cs.code == c {
			out.codes = append(out.codes, cs)
		}
	}
	return out
}

// heldOrReplaced reports whether the peers of o's distribution that hold
// o's version or a newer record make a write quorum of o's code: o may
// have been acknowledged, and the newer records replaced it since.
func heldOrReplaced(o *meta.Object, answers map[meta.PeerID]metaAnswer) bool {
	n := 0
	for _, p := range o.Distribution {
		if a, ok := answers[p]; ok && a.obj != nil && !a.obj.Stamp.Less(o.Stamp) {
			n++
		}
	}
	return n >= o.Code.WriteQuorum()
}

// byStampDesc groups the records read, kept ones included, by stamp,
// newest first. A kept copy counts as a copy: its peer still holds the
// version whole, record and shards, until a newer one is settled.
func byStampDesc(answers map[meta.PeerID]metaAnswer) [][]*meta.Object {
	groups := map[meta.Stamp][]*meta.Object{}
	for _, a := range answers {
		if a.obj != nil {
			groups[a.obj.Stamp] = append(groups[a.obj.Stamp], a.obj)
		}
		for _, k := range a.kept {
			groups[k.Stamp] = append(groups[k.Stamp], k)
		}
	}
	out := make([][]*meta.Object, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g, func(i, j int) bool { return g[i].ShardIndex < g[j].ShardIndex })
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[j][0].Stamp.Less(out[i][0].Stamp) })
	return out
}

func versionOf(group []*meta.Object, answers map[meta.PeerID]metaAnswer) *version {
	v := &version{obj: group[0], holders: map[int]*meta.Object{}, absent: map[int]bool{}, failed: map[int]bool{}}
	for _, o := range group {
		v.holders[o.ShardIndex] = o
	}
	for _, a := range answers {
		if a.obj != nil && v.obj.Stamp.Less(a.obj.Stamp) {
			v.replacing = true
		}
	}
	for i, p := range v.obj.Distribution {
		a, ok := answers[p]
		switch {
		case !ok || v.holders[i] != nil:
		case a.answered():
			v.absent[i] = true
		default:
			v.failed[i] = true
		}
	}
	return v
}

func quorumOf(op string, q querySet, answers map[meta.PeerID]metaAnswer) *QuorumError {
	e := &QuorumError{Op: op, PerPeer: map[meta.PeerID]error{}}
	for _, cs := range q.codes {
		e.Need = max(e.Need, cs.code.N()-cs.code.WriteQuorum()+1)
	}
	for _, p := range q.peers {
		a, ok := answers[p]
		switch {
		case !ok:
			e.PerPeer[p] = errors.New("no answer")
		case a.answered():
			e.Got++
		default:
			e.PerPeer[p] = a.err
		}
	}
	return e
}

// refusedOr replaces a quorum failure by the peers' common refusal of a
// malformed request, which no retry can fix.
func refusedOr(err error, answers map[meta.PeerID]metaAnswer) error {
	var qe *QuorumError
	if !errors.As(err, &qe) {
		return err
	}
	errs := make([]error, 0, len(answers))
	for _, a := range answers {
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	if rej := rejectionOf(errs, qe.Need); rej != nil {
		return rej
	}
	return err
}

// noteMissing queues a version for repair when some of its peers do not
// hold it.
func (l *Layer) noteMissing(bucket, key string, v *version, answers map[meta.PeerID]metaAnswer) {
	if v == nil || v.obj.Deleted || len(v.holders) == len(v.obj.Distribution) {
		return
	}
	var shards []int
	for i, p := range v.obj.Distribution {
		if _, held := v.holders[i]; !held {
			if _, ok := answers[p]; ok {
				shards = append(shards, i)
			}
		}
	}
	if len(shards) > 0 {
		l.queueRepair(RepairItem{Bucket: bucket, Key: key, Stamp: v.obj.Stamp, Shards: shards, Reason: "metadata missing or stale"})
	}
}

func distinctShards(group []*meta.Object) int {
	seen := map[int]bool{}
	for _, o := range group {
		seen[o.ShardIndex] = true
	}
	return len(seen)
}
