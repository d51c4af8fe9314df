package object

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"tessera/meta"
)

// uploadView is a multipart upload as read back from its peers.
type uploadView struct {
	u *meta.Upload // one copy of the record
	// holders are the copies read, by shard, each with the parts that
	// peer committed.
	holders map[int]*meta.Upload
}

// partView is a part as the upload's peers agree on it.
type partView struct {
	meta.Part
	shards []int // holders of exactly this part
}

// readUpload reads the upload record from every peer the key may live
// on. Any valid copy describes the upload (its fields never change after
// creation); the parts are merged by parts().
func (l *Layer) readUpload(ctx context.Context, bucket, key, uploadID string) (*uploadView, error) {
	q, err := l.querySet(bucket, key)
	if err != nil {
		return nil, err
	}
	// Every peer's answer shows which parts it holds, but a peer lagging
	// once all others answered is given up (as many as the narrowest
	// parity could lose): its shards then count as not ready.
	need := len(q.peers)
	for _, cs := range q.codes {
		need = min(need, len(q.peers)-cs.code.M)
	}
	rs := fanoutQuorum(ctx, l, q.peers, l.cfg.PeerTimeout, need, func(ctx context.Context, _ int, c ShardClient) (*meta.Upload, error) {
		return c.GetUpload(ctx, bucket, key, uploadID)
	})
	v := &uploadView{holders: map[int]*meta.Upload{}}
	for i := range rs {
		r := &rs[i]
		if r.err == nil {
			r.err = checkUpload(r.val, r.peer, bucket, key, uploadID)
		}
		if r.err == nil {
			if v.u == nil {
				v.u = r.val
			}
			v.holders[r.val.ShardIndex] = r.val
		}
	}
	if v.u != nil {
		return v, nil
	}
	return nil, l.uploadAbsent(ctx, q, bucket, tallyOf(rs))
}

// uploadAbsent explains why no peer returned an upload: a missing bucket,
// too many silent peers to be sure, or no such upload. A peer refusing the
// upload ID as malformed holds no upload by that ID either: S3 answers
// NoSuchUpload for any ID it never issued.
func (l *Layer) uploadAbsent(ctx context.Context, q querySet, bucket string, t tally) error {
	silent := len(t.errs) - t.count(meta.ErrUploadNotFound) - t.count(meta.ErrBucketNotFound) -
		t.count(meta.ErrInvalidArgument)
	need := len(q.peers)
	for _, cs := range q.codes {
		need = min(need, cs.code.WriteQuorum())
	}
	if silent >= need {
		return t.quorumError("read upload", len(q.peers)-need+1)
	}
	if l.bucketMissing(ctx, bucket) {
		return ErrBucketNotFound
	}
	return ErrUploadNotFound
}

func checkUpload(u *meta.Upload, id meta.PeerID, bucket, key, uploadID string) error {
	switch {
	case u == nil:
		return fmt.Errorf("%w: nil upload", meta.ErrCorrupt)
	case u.Bucket != bucket || u.Key != key || u.UploadID != uploadID:
		return fmt.Errorf("%w: upload %s of %s/%s", meta.ErrCorrupt, u.UploadID, u.Bucket, u.Key)
	case !u.Code.Valid() || len(u.Distribution) != u.Code.N() || u.BlockSize <= 0:
		return fmt.Errorf("%w: upload code %s over %d peers", meta.ErrCorrupt, u.Code, len(u.Distribution))
	case u.ShardIndex < 0 || u.ShardIndex >= len(u.Distribution) || u.Distribution[u.ShardIndex] != id:
		return fmt.Errorf("%w: upload shard %d is not held by %s", meta.ErrCorrupt, u.ShardIndex, id)
	}
	return nil
}

// parts merges the holders' part lists: for each number the version
// (ETag and size) most holders have, kept only if at least k hold it,
// since fewer shards cannot be decoded.
func (v *uploadView) parts() []partView {
	type variant struct {
		p      meta.Part
		shards []int
	}
	byNum := map[int][]*variant{}
	for shard, h := range v.holders {
		for _, p := range h.Parts {
			vs := byNum[p.Number]
			var hit *variant
			for _, x := range vs {
				if samePart(x.p, p) {
					hit = x
				}
			}
			if hit == nil {
				hit = &variant{p: p}
				byNum[p.Number] = append(vs, hit)
			}
			hit.shards = append(hit.shards, shard)
		}
	}
	var out []partView
	for _, vs := range byNum {
		sort.Slice(vs, func(i, j int) bool { return len(vs[i].shards) > len(vs[j].shards) })
		if best := vs[0]; len(best.shards) >= v.u.Code.K {
			sort.Ints(best.shards)
			out = append(out, partView{Part: best.p, shards: best.shards})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

func isBucketNotFound(err error) bool { return errors.Is(err, meta.ErrBucketNotFound) }
