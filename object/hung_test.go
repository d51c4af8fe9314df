package object

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"tessera/meta"
)

// hungLayer is a layer whose PeerTimeout no test may wait out: a write
// or read that waits for a hung peer's deadline fails on the test's own
// context instead. A peer given up stays left out for the whole test.
func hungLayer(t *testing.T, tune ...func(*Config)) (*Layer, *fakeCluster, *repairLog) {
	t.Helper()
	rl := &repairLog{}
	l, fc := newTestLayer(t, append([]func(*Config){func(c *Config) {
		c.PeerTimeout = 10 * time.Minute
		c.StallAfter = 20 * time.Millisecond
		c.StallHold = 10 * time.Minute
		c.Repair = rl.add
	}}, tune...)...)
	return l, fc, rl
}

// repairLog collects the repair items a layer queues.
type repairLog struct {
	mu    sync.Mutex
	items []RepairItem
}

func (r *repairLog) add(it RepairItem) {
	r.mu.Lock()
	r.items = append(r.items, it)
	r.mu.Unlock()
}

// queued reports whether shard of key was queued for repair.
func (r *repairLog) queued(key string, shard int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range r.items {
		if it.Key == key && slices.Contains(it.Shards, shard) {
			return true
		}
	}
	return false
}

// testCtx bounds a call that must not wait for a hung peer.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func putCtx(ctx context.Context, l *Layer, key string, data []byte) error {
	_, err := l.PutObject(ctx, testBucket, key, bytes.NewReader(data), int64(len(data)), PutOptions{})
	return err
}

// A peer that hangs (before taking a byte, or after taking all of them
// without answering) costs one write about StallAfter, not its
// deadline: the write completes on the others, the missing shard is
// queued for repair, and the next write leaves the peer out.
func TestWriteLeavesHungPeerOut(t *testing.T) {
	sizes := map[string]int{"inline": 700, "one": testBlock - 1, "multi": 3*testBlock + 33}
	for _, f := range []fault{faultHang, faultStallReply} {
		for name, size := range sizes {
			t.Run(fmt.Sprintf("%s/%s", faultNames[f], name), func(t *testing.T) {
				l, fc, rl := hungLayer(t)
				ctx := testCtx(t)
				const shard = 2
				hung := fc.peerAt(testBucket, "a", 6, shard)
				hung.setFault(f)
				data := randBytes(7, size)
				if err := putCtx(ctx, l, "a", data); err != nil {
					t.Fatalf("put with one peer hung: %v", err)
				}
				if !rl.queued("a", shard) {
					t.Errorf("shard %d of the hung peer not queued for repair: %+v", shard, rl.items)
				}
				calls := hung.calls.Load()
				if err := putCtx(ctx, l, "b", data); err != nil {
					t.Fatalf("second put: %v", err)
				}
				if n := hung.calls.Load() - calls; n != 0 {
					t.Errorf("the next write made %d calls to the peer that hung", n)
				}
				if !rl.queued("b", slices.Index(placementIDs(fc, "b"), hung.id)) {
					t.Errorf("the write that left the peer out queued no repair for it")
				}
				mustGet(t, l, "a", data)
				mustGet(t, l, "b", data)
			})
		}
	}
}

func placementIDs(fc *fakeCluster, key string) []meta.PeerID {
	ps, _ := fc.Placement(testBucket, key, 6)
	return ps
}

// A peer gossip holds dead gets no call from a write while the quorum
// holds without it, and is written to again once alive. Leaving peers
// out never costs the quorum: with three of six held dead a 4+2 write
// tries them rather than fail outright.
func TestWriteLeavesDeadPeerOut(t *testing.T) {
	l, fc, rl := hungLayer(t)
	ctx := testCtx(t)
	dead := fc.peerAt(testBucket, "a", 6, 4)
	fc.setAlive(dead.id, false)
	calls := dead.calls.Load()
	data := randBytes(8, 2*testBlock)
	if err := putCtx(ctx, l, "a", data); err != nil {
		t.Fatal(err)
	}
	if n := dead.calls.Load() - calls; n != 0 {
		t.Errorf("%d calls to a peer gossip holds dead", n)
	}
	if !rl.queued("a", 4) {
		t.Error("the shard of the dead peer was not queued for repair")
	}
	fc.setAlive(dead.id, true)
	stages, commits := dead.stages.Load(), dead.commits.Load()
	if err := putCtx(ctx, l, "a", data); err != nil {
		t.Fatal(err)
	}
	if dead.stages.Load() == stages || dead.commits.Load() == commits {
		t.Error("the peer alive again got no shard")
	}
	mustGet(t, l, "a", data)

	for _, i := range []int{0, 1, 2} {
		fc.setAlive(fc.peerAt(testBucket, "a", 6, i).id, false)
	}
	third := fc.peerAt(testBucket, "a", 6, 2)
	calls = third.calls.Load()
	if err := putCtx(ctx, l, "a", data); err != nil {
		t.Fatalf("three of six held dead but reachable: %v", err)
	}
	if third.calls.Load() == calls {
		t.Error("with too few peers left, the write did not try the ones held dead")
	}
	mustGet(t, l, "a", data)
}

// A read past a peer that hangs completes from the other shards, and the
// next read does not ask the peer for shard bytes. Metadata calls first
// teach the layer each peer's latency, so a hung shard open is given up
// at the latency-based deadline rather than at PeerTimeout.
func TestReadPastHungPeer(t *testing.T) {
	for _, f := range []fault{faultHang, faultHangRead} {
		t.Run(faultNames[f], func(t *testing.T) {
			l, fc, _ := hungLayer(t)
			ctx := testCtx(t)
			data := randBytes(10, 3*testBlock+5)
			for i := range latencyMin + 1 {
				if err := putCtx(ctx, l, fmt.Sprintf("warm%d", i), data[:100]); err != nil {
					t.Fatal(err)
				}
			}
			if err := putCtx(ctx, l, "r", data); err != nil {
				t.Fatal(err)
			}
			hung := fc.peerAt(testBucket, "r", 6, 0) // a data shard: read first
			hung.setFault(f)
			for range 2 {
				got, err := getCtx(ctx, l, "r")
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read past a hung peer: %d bytes, %v", len(got), err)
				}
			}
			reads := hung.reads.Load()
			if _, err := getCtx(ctx, l, "r"); err != nil {
				t.Fatal(err)
			}
			if n := hung.reads.Load() - reads; n != 0 {
				t.Errorf("a read after the peer hung asked it for shard bytes %d times", n)
			}
		})
	}
}

func getCtx(ctx context.Context, l *Layer, key string) ([]byte, error) {
	var buf bytes.Buffer
	err := l.GetObject(ctx, testBucket, key, func(ObjectInfo) (w io.Writer, off, length int64, err error) {
		return &buf, 0, -1, nil
	})
	return buf.Bytes(), err
}

// A multipart upload through a peer that hangs completes on the others:
// creating it, each part and the completion stop waiting for the peer
// once their quorum answered.
func TestMultipartPastHungPeer(t *testing.T) {
	for _, f := range []fault{faultHang, faultStallReply} {
		t.Run(faultNames[f], func(t *testing.T) {
			l, fc, rl := hungLayer(t)
			ctx := testCtx(t)
			fc.peerAt(testBucket, "mp", 6, 1).setFault(f)
			id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
			if err != nil {
				t.Fatalf("create upload: %v", err)
			}
			data := randBytes(11, 250<<10)
			uploadParts(ctx, t, l, id, [][]byte{data[:120<<10], data[120<<10:]}, nil)
			if !rl.queued("mp", 1) {
				t.Error("the hung peer's shard was not queued for repair")
			}
			mustGet(t, l, "mp", data)
		})
	}
}

// Parts of one upload all go to every peer that answers, even to a peer
// another request has just marked stalled: parts kept from different
// peers would leave no peer with its shard of every part, and Complete
// would fail although every part is well stored.
func TestMultipartPartsIgnoreStallMarks(t *testing.T) {
	l, fc, rl := hungLayer(t)
	ctx := testCtx(t)
	id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(12, 4*(110<<10))
	var chunks [][]byte
	for n := range 4 {
		chunks = append(chunks, data[n*(110<<10):(n+1)*(110<<10)])
	}
	uploadParts(ctx, t, l, id, chunks, func(n int) {
		if n > 0 { // a different peer marked before each later part
			l.health.stall(fc.peerAt(testBucket, "mp", 6, n).id)
		}
	})
	for i := range 6 {
		if rl.queued("mp", i) {
			t.Errorf("shard %d queued for repair: a part missed its peer", i)
		}
	}
	mustGet(t, l, "mp", data)
}

// uploadParts puts chunks as the parts of upload id of key "mp", calling
// before(n) ahead of part n+1 when set, and completes the upload.
func uploadParts(ctx context.Context, t *testing.T, l *Layer, id string, chunks [][]byte, before func(n int)) {
	t.Helper()
	var parts []CompletePart
	for n, chunk := range chunks {
		if before != nil {
			before(n)
		}
		p, err := l.PutPart(ctx, testBucket, "mp", id, n+1, bytes.NewReader(chunk), int64(len(chunk)), nil)
		if err != nil {
			t.Fatalf("part %d: %v", n+1, err)
		}
		parts = append(parts, CompletePart{Number: p.Number, ETag: p.ETag})
	}
	if _, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{}); err != nil {
		t.Fatalf("complete: %v", err)
	}
}
