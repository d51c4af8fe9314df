package server

import (
	"context"
	"io"
	"sync"

	"tessera/meta"
	"tessera/object"
	"tessera/peer"
	"tessera/storage"
)

// localPeer is the shard client of a peer in this process: the object
// layer calls the peer's store directly, with no HTTP, no request MAC
// and no loopback copies. Shard traffic still goes through the peer's
// meter, so the throughput and load gossip carries for the ring and the
// read scheduler counts it as it would over the network.
type localPeer struct {
	*storage.Store
	meter *peer.Meter
}

var (
	_ object.ShardClient     = localPeer{}
	_ object.Mover           = localPeer{}
	_ object.Rewriter        = localPeer{}
	_ object.RepairCommitter = localPeer{}
	_ object.UploadLister    = localPeer{}
)

func (l localPeer) StageShard(ctx context.Context, r io.Reader) (string, error) {
	defer l.meter.Begin()()
	return l.Store.StageShard(ctx, l.meter.Received(r))
}

func (l localPeer) ReadShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, error) {
	end := l.meter.Begin()
	rc, err := l.Store.ReadShard(ctx, bucket, key, stamp, part, offset, length)
	if err != nil {
		end()
		return nil, err
	}
	return &endingBody{ReadCloser: l.meter.Sent(rc), end: end}, nil
}

// endingBody ends a metered call when its body is closed, once.
type endingBody struct {
	io.ReadCloser
	end  func()
	once sync.Once
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}
