package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"tessera/meta"
)

// maxReresolve bounds how often resolveToRead resolves again after
// finding a version's shards gone; each time a newer version had landed.
const maxReresolve = 3

// resolveToRead is resolve for a read that will stream the version's
// bytes once its response has started, when a failure can no longer be
// reported. Peers keep a replaced version's shard files for a grace
// period, but a peer that does not (one restarted since, or running an
// older release) removes them with the commit that replaces them. So when
// the records showed a newer version landing as they were read, this
// first checks that k shards of the version can still be opened, and if
// not resolves again: a newer version that has meanwhile settled is read
// instead. The same version with its shards gone is ErrQuorum, before a
// byte of the response.
func (l *Layer) resolveToRead(ctx context.Context, bucket, key string) (*version, error) {
	v, err := l.resolve(ctx, bucket, key)
	for range maxReresolve {
		if err != nil || !v.replacing || v.obj.Inlined || !l.shardsGone(ctx, v) {
			return v, err
		}
		was := v.obj.Stamp
		v, err = l.resolve(ctx, bucket, key)
		if err == nil && v.obj.Stamp == was {
			return nil, fmt.Errorf("%w: shards of version %s gone", ErrQuorum, was)
		}
	}
	return v, err
}

// shardsGone reports whether v's shards are gone: fewer than k peers of
// its distribution hold a shard file of its first part. The peers seen
// holding another version are asked only if the others do not settle it.
// A peer that fails otherwise may still hold its shard and counts as
// holding it; the read proper finds out.
func (l *Layer) shardsGone(ctx context.Context, v *version) bool {
	var likely, others []int
	for i := range v.obj.Distribution {
		if v.absent[i] {
			others = append(others, i)
		} else {
			likely = append(likely, i)
		}
	}
	k := v.obj.Code.K
	held := l.probeShards(ctx, v.obj, likely, k)
	if held < k {
		held += l.probeShards(ctx, v.obj, others, k-held)
	}
	return held < k
}

// probeShards asks the peers of shards whether they hold o's first part
// and returns how many may (all but those answering not-found), stopping
// once need do or can no longer. The probes read nothing and run in
// parallel; those still running when the answer is known are cancelled
// and waited for.
func (l *Layer) probeShards(ctx context.Context, o *meta.Object, shards []int, need int) int {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	part := partsOf(o)[0].Number
	gone := make(chan bool, len(shards))
	for _, i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc, err := call(ctx, l, o.Distribution[i], l.cfg.PeerTimeout, func(ctx context.Context, c ShardClient) (io.ReadCloser, error) {
				return c.ReadShard(ctx, o.Bucket, o.Key, o.Stamp, part, 0, 0)
			})
			if err == nil {
				_ = rc.Close() // nothing was read
			}
			gone <- errors.Is(err, meta.ErrNotFound)
		}()
	}
	held := 0
	for left := len(shards); left > 0 && held < need && held+left >= need; left-- {
		if !<-gone {
			held++
		}
	}
	return held
}
