package object

import (
	"context"
	"slices"

	"tessera/meta"
)

// Settling.
//
// A peer keeps the version a commit replaces, record and shards, until it
// learns that the replacing version is settled: on a write quorum of its
// peers (ShardClient.ReadVersions, Settle). A gateway that dies between
// the commits of one write can leave the new version on too few peers to
// be read; the peers that took it still hold the old one, so reads find
// the old version whole and the key reads as before the write, never
// unreadable. The writer settles a version once its commit met the
// quorum, after the response; reads settle a version they find on a
// write quorum whose peers still keep older ones (its writer died first).
// A settle that is lost only keeps old data a while longer.

// maxSettling bounds the settles in flight; beyond it a settle is
// skipped, and a later read of the key settles it.
const maxSettling = 256

// settleLater settles version o on peers in the background, each call
// bounded by StallAfter: the method returns at once and its goroutine
// ends within that bound.
func (l *Layer) settleLater(o *meta.Object, peers []meta.PeerID) {
	if len(peers) == 0 {
		return
	}
	select {
	case l.settling <- struct{}{}:
	default:
		return
	}
	bucket, key, st := o.Bucket, o.Key, o.Stamp
	go func() {
		defer func() { <-l.settling }()
		ctx := quiet(context.Background())
		fanout(ctx, l, peers, l.cfg.StallAfter, func(ctx context.Context, _ int, c ShardClient) (struct{}, error) {
			return struct{}{}, c.Settle(ctx, bucket, key, st)
		})
	}()
}

// settleAcked settles o on the peers whose commit of it succeeded, once
// those made its write quorum.
func (l *Layer) settleAcked(o *meta.Object, rs []reply[struct{}]) {
	var peers []meta.PeerID
	for _, r := range rs {
		if r.err == nil {
			peers = append(peers, r.peer)
		}
	}
	l.settleLater(o, peers)
}

// settleSeen settles version v on the peers of a read that hold it as
// their current record and still keep older versions, provided peers
// holding it as current make a write quorum.
func (l *Layer) settleSeen(v *version, answers map[meta.PeerID]metaAnswer) {
	if v == nil {
		return
	}
	var shards []int
	var keeping []meta.PeerID
	for _, a := range answers {
		if a.obj == nil || a.obj.Stamp != v.obj.Stamp {
			continue
		}
		if !slices.Contains(shards, a.obj.ShardIndex) {
			shards = append(shards, a.obj.ShardIndex)
		}
		if len(a.kept) > 0 {
			keeping = append(keeping, a.peer)
		}
	}
	if len(keeping) > 0 && len(shards) >= v.obj.Code.WriteQuorum() {
		l.settleLater(v.obj, keeping)
	}
}
