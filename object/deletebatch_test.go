package object

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tessera/meta"
)

// putKeys writes n keys, small (inlined) and larger ones alternating.
func putKeys(t *testing.T, l *Layer, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("d%02d/k%03d", i%7, i)
		size := 10 + i
		if i%2 == 1 {
			size = 2*testBlock + i // shard files
		}
		put(t, l, keys[i], randBytes(uint64(i), size))
	}
	return keys
}

func wantDeleted(t *testing.T, l *Layer, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, err := l.HeadObject(context.Background(), testBucket, k); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("%s after the batch delete: %v", k, err)
		}
	}
	if res, err := l.ListObjects(context.Background(), testBucket, ListOptions{}); err != nil || len(res.Objects) != 0 {
		t.Errorf("listing after the batch delete: %+v, %v", res.Objects, err)
	}
}

// A batch delete sends each peer one call per tombBatchMax keys with its
// share of their tombstones; keys that were never written succeed as S3
// has it.
func TestDeleteObjectsCallsPerPeer(t *testing.T) {
	l, fc := newTestLayer(t)
	keys := putKeys(t, l, 2*tombBatchMax+30)
	commits := map[meta.PeerID]int64{}
	for id, p := range fc.peers {
		commits[id] = p.commits.Load()
	}
	all := append(keys, "never/written", "nor/this")
	for i, err := range l.DeleteObjects(context.Background(), testBucket, all, false) {
		if err != nil {
			t.Errorf("%s: %v", all[i], err)
		}
	}
	wantDeleted(t, l, all)
	for id, p := range fc.peers {
		if n := p.batches.Load(); n != 3 {
			t.Errorf("peer %s got %d batch calls for %d keys, want 3", id, n, len(all))
		}
		// Six peers, codes of six shards: every key is on every peer.
		if n := p.commits.Load() - commits[id]; n != int64(len(keys)) {
			t.Errorf("peer %s committed %d tombstones, want %d", id, n, len(keys))
		}
	}
}

// With a peer refusing writes and another hung, every key still reaches
// its write quorum, the batch does not wait out the hung peer, and both
// peers' shards are queued for repair.
func TestDeleteObjectsAroundFailedPeers(t *testing.T) {
	l, fc, rl := hungLayer(t)
	keys := putKeys(t, l, 12)
	ctx := testCtx(t)
	down := fc.peerAt(testBucket, keys[0], 6, 1)
	hung := fc.peerAt(testBucket, keys[0], 6, 4)
	down.setFault(faultFailCommit)
	hung.setFault(faultStallReply)
	start := time.Now()
	for i, err := range l.DeleteObjects(ctx, testBucket, keys, false) {
		if err != nil {
			t.Errorf("%s with a peer down and one hung: %v", keys[i], err)
		}
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the batch took %v, waiting on the hung peer", d)
	}
	down.setFault(faultNone)
	hung.setFault(faultNone)
	wantDeleted(t, l, keys)
	for _, k := range keys {
		for s, id := range placementIDs(fc, k) {
			if (id == down.id || id == hung.id) && !rl.queued(k, s) {
				t.Errorf("%s: shard %d on %s not queued for repair", k, s, id)
			}
		}
	}
}

// A key that already leaves out a stalled peer can do without one peer
// fewer: the batch waits for a slow peer rather than cut it with a hung
// one, which would leave the key short of its quorum.
func TestDeleteObjectsCountsPeersLeftOut(t *testing.T) {
	l, fc, _ := hungLayer(t)
	keys := putKeys(t, l, 1)
	ps := placementPeers(fc, keys[0], 6)
	l.stall(ps[0].id, "stalled before the delete")
	ps[1].setFault(faultStallReply)
	ps[2].beforeBatch = func(ctx context.Context) error {
		select {
		case <-time.After(300 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i, err := range l.DeleteObjects(testCtx(t), testBucket, keys, false) {
		if err != nil {
			t.Errorf("%s: %v", keys[i], err)
		}
	}
	ps[1].setFault(faultNone)
	wantDeleted(t, l, keys)
}

// Too many peers down: each key fails with the write quorum's error,
// and nothing reads as deleted.
func TestDeleteObjectsWithoutQuorum(t *testing.T) {
	l, fc := newTestLayer(t)
	keys := putKeys(t, l, 6)
	for s := range 2 {
		fc.peerAt(testBucket, keys[0], 6, s).setFault(faultFailCommit)
	}
	fc.peerAt(testBucket, keys[0], 6, 2).setFault(faultFailCommit)
	for i, err := range l.DeleteObjects(context.Background(), testBucket, keys, false) {
		var qe *QuorumError
		if !errors.As(err, &qe) {
			t.Errorf("%s with three peers refusing: %v, want a quorum error", keys[i], err)
		}
	}
	for s := range 3 {
		fc.peerAt(testBucket, keys[0], 6, s).setFault(faultNone)
	}
	for i, k := range keys {
		if _, err := l.HeadObject(context.Background(), testBucket, k); err != nil {
			t.Errorf("%s (put #%d) after a failed delete: %v", k, i, err)
		}
	}
}

// A write that lands between a batch delete's reads and its tombstones,
// stamped above them, makes every peer refuse the key's tombstone as
// stale: that key is deleted again, alone, above the stamps the peers
// named, as a delete of it alone would be; the other keys go as sent.
func TestDeleteObjectsLosingToANewerWrite(t *testing.T) {
	writer, fc := newTestLayer(t, skewed("gw-ahead", 30*time.Second))
	deleter := layerOn(t, fc, skewed("gw-deleter", 0))
	keys := putKeys(t, writer, 8)
	var once sync.Once
	for _, p := range fc.peers {
		p.beforeBatch = func(context.Context) error {
			once.Do(func() { put(t, writer, keys[3], []byte("newer")) })
			return nil
		}
	}
	for i, err := range deleter.DeleteObjects(context.Background(), testBucket, keys, false) {
		if err != nil {
			t.Errorf("%s: %v", keys[i], err)
		}
	}
	wantDeleted(t, writer, keys)
	if n := fc.peers[fc.ids[0]].batches.Load(); n != 1 {
		t.Errorf("%d batch calls to a peer, want 1 (the retry goes alone)", n)
	}
}

func TestDeleteObjectsRefusesRepeatedKeys(t *testing.T) {
	l, _ := newTestLayer(t)
	keys := putKeys(t, l, 3)
	for _, err := range l.DeleteObjects(context.Background(), testBucket, append(keys, keys[1]), false) {
		wantErr(t, err, meta.ErrInvalidArgument)
	}
	for _, k := range keys {
		if _, err := l.HeadObject(context.Background(), testBucket, k); err != nil {
			t.Errorf("%s after a refused batch: %v", k, err)
		}
	}
}
