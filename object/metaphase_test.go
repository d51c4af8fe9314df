package object

import (
	"context"
	"testing"
	"time"
)

// metaReads is the number of ReadMeta calls fc's peers have taken.
func metaReads(fc *fakeCluster) int64 {
	return sumPeers(fc, func(p *fakePeer) int64 { return p.metas.Load() })
}

// TestReadAsksFewestRecords: a GET asks k peers for the key's record
// when their answers settle the version, and the other peers only when
// they do not (a peer down, hung, holding an older version) — and the
// read is then still byte-exact and quick.
func TestReadAsksFewestRecords(t *testing.T) {
	cases := []struct {
		name string
		size int
		// spoil damages the record or peer of shard 0 (a first-phase
		// peer) after the write, given the layer's cluster.
		spoil func(fc *fakeCluster, key string)
		// The reads a GET asks, at least and at most: the second phase's
		// calls that a decision makes late may not have begun when counted.
		min, max int64
	}{
		{"inlined, healthy", testInline / 2, nil, 4, 4},
		{"erasure-coded, healthy", 3 * testBlock, nil, 4, 4},
		{"first-phase peer down", testInline / 2, func(fc *fakeCluster, key string) {
			fc.peerAt(testBucket, key, 6, 0).setFault(faultDown)
		}, 5, 6},
		{"first-phase peer hung", testInline / 2, func(fc *fakeCluster, key string) {
			fc.peerAt(testBucket, key, 6, 1).setFault(faultHang)
		}, 5, 6},
		{"first-phase peer without the record", 3 * testBlock, func(fc *fakeCluster, key string) {
			p := fc.peerAt(testBucket, key, 6, 2)
			p.mu.Lock()
			delete(p.records, objKey(testBucket, key))
			p.mu.Unlock()
		}, 5, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, fc := newTestLayer(t)
			// A hedge delay far above what four in-memory calls take even
			// on a loaded machine, far below PeerTimeout.
			l.metaPhaseNs.Store(int64(50 * time.Millisecond))
			key := "k-" + tc.name
			data := randBytes(7, tc.size)
			put(t, l, key, data)
			if tc.spoil != nil {
				tc.spoil(fc, key)
			}
			before := metaReads(fc)
			start := time.Now()
			mustGet(t, l, key, data)
			// A hung peer's call waits for PeerTimeout; the read must not:
			// the hedge asks the others long before.
			if d := time.Since(start); d >= l.cfg.PeerTimeout {
				t.Errorf("GET took %v", d)
			}
			if n := metaReads(fc) - before; n < tc.min || n > tc.max {
				t.Errorf("GET asked %d records, want %d to %d", n, tc.min, tc.max)
			}
			fc.heal()
		})
	}
}

// TestRepairReadAsksAll: a repair's metadata read asks every peer at
// once, since it must learn which of them lack the version.
func TestRepairReadAsksAll(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "k", randBytes(3, testInline/2))
	q, err := l.querySet(testBucket, "k")
	if err != nil {
		t.Fatal(err)
	}
	before := metaReads(fc)
	if _, _, err := l.readMeta(quiet(context.Background()), q, testBucket, "k"); err != nil {
		t.Fatal(err)
	}
	// Late answers are drained in the background: wait for all six.
	deadline := time.Now().Add(5 * time.Second)
	for metaReads(fc)-before < 6 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := metaReads(fc) - before; n != 6 {
		t.Errorf("repair read asked %d records, want 6", n)
	}
}
