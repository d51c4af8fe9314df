package object

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// records counts the peers holding a record of key, and how many of
// those are tombstones.
func records(fc *fakeCluster, key string) (held, tombs int) {
	for _, p := range fc.peers {
		p.mu.Lock()
		if o := p.held(testBucket, key); o != nil {
			held++
			if o.Deleted {
				tombs++
			}
		}
		p.mu.Unlock()
	}
	return held, tombs
}

// deleteWithout deletes key while the peers of shards down are down.
func deleteWithout(t *testing.T, l *Layer, fc *fakeCluster, key string, down ...int) {
	t.Helper()
	for _, i := range down {
		fc.peerAt(testBucket, key, 6, i).setFault(faultDown)
	}
	if err := l.DeleteObject(context.Background(), testBucket, key); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
	fc.heal()
}

// scanOnce runs one scanner pass with no rate limit.
func scanOnce(t *testing.T, l *Layer, grace time.Duration) RepairStats {
	t.Helper()
	q := NewRepairQueue(RepairQueueConfig{TombstoneGrace: grace})
	tick := make(chan time.Time)
	close(tick)
	if err := q.scanPass(context.Background(), l, tick); err != nil {
		t.Fatalf("scan pass: %v", err)
	}
	return q.Stats()
}

// A delete that missed two peers is completed by the scanner, which has
// no report of it (as after a gateway restart): the tombstone reaches
// every peer, so any two peers down still read the key as deleted.
func TestScannerRepairsTombstones(t *testing.T) {
	l, fc := newTestLayer(t)
	keys := []string{"inline", "blocks"}
	put(t, l, "inline", randBytes(1, 300))
	put(t, l, "blocks", randBytes(2, 3*testBlock+5))
	for _, k := range keys {
		deleteWithout(t, l, fc, k, 1, 4)
		if _, tombs := records(fc, k); tombs != 4 {
			t.Fatalf("%s: %d tombstones after the delete, want 4", k, tombs)
		}
	}
	scanOnce(t, l, -1)
	for _, k := range keys {
		if held, tombs := records(fc, k); held != 6 || tombs != 6 {
			t.Fatalf("%s: after a scan pass %d records, %d tombstones; want 6 tombstones", k, held, tombs)
		}
		for a := range 6 {
			for b := a + 1; b < 6; b++ {
				fc.peerAt(testBucket, k, 6, a).setFault(faultDown)
				fc.peerAt(testBucket, k, 6, b).setFault(faultDown)
				_, err := get(l, k)
				wantErr(t, err, ErrObjectNotFound)
				fc.heal()
			}
		}
	}
}

func TestCollectTombstone(t *testing.T) {
	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	cases := []struct {
		name    string
		before  time.Time
		setup   func(t *testing.T, l *Layer, fc *fakeCluster, key string)
		collect bool
	}{
		{name: "on every peer and old enough", before: later, collect: true,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) { deleteWithout(t, l, fc, key) }},
		{name: "too young", before: earlier,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) { deleteWithout(t, l, fc, key) }},
		{name: "a peer down", before: later,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) {
				deleteWithout(t, l, fc, key)
				fc.peerAt(testBucket, key, 6, 2).setFault(faultDown)
			}},
		{name: "a peer's record damaged", before: later,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) {
				deleteWithout(t, l, fc, key)
				fc.peerAt(testBucket, key, 6, 2).setFault(faultCorruptMeta)
			}},
		{name: "the delete missed peers holding the old version", before: later,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) { deleteWithout(t, l, fc, key, 0, 5) }},
		{name: "written again", before: later,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) {
				deleteWithout(t, l, fc, key)
				put(t, l, key, randBytes(9, 100))
			}},
		{name: "an earlier collection was cut short", before: later, collect: true,
			setup: func(t *testing.T, l *Layer, fc *fakeCluster, key string) {
				deleteWithout(t, l, fc, key)
				for i := range 4 {
					p := fc.peerAt(testBucket, key, 6, i)
					o, err := p.ReadMeta(context.Background(), testBucket, key)
					if err != nil {
						t.Fatal(err)
					}
					if err := p.DropVersion(context.Background(), testBucket, key, o.Stamp); err != nil {
						t.Fatal(err)
					}
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, fc := newTestLayer(t)
			key := "k"
			put(t, l, key, randBytes(3, 2*testBlock))
			tc.setup(t, l, fc, key)
			heldBefore, _ := records(fc, key)
			got, err := l.CollectTombstone(context.Background(), testBucket, key, tc.before)
			if err != nil && tc.collect {
				t.Fatalf("collect: %v", err)
			}
			fc.heal()
			held, _ := records(fc, key)
			switch {
			case got != tc.collect:
				t.Fatalf("collected %v, want %v", got, tc.collect)
			case got && held != 0:
				t.Fatalf("collected, yet %d peers hold a record", held)
			case !got && held != heldBefore:
				t.Fatalf("not collected, yet %d of %d records were dropped", heldBefore-held, heldBefore)
			}
			if tc.name == "written again" {
				mustGet(t, l, key, randBytes(9, 100))
				return
			}
			_, err = get(l, key)
			wantErr(t, err, ErrObjectNotFound)
			// A collected key takes a new write like a key never written.
			put(t, l, key, randBytes(4, 500))
			mustGet(t, l, key, randBytes(4, 500))
		})
	}
}

// While an older ring layout's peers still hold the version a delete
// replaced, the tombstone is what hides it: collecting it would bring
// the old version back.
func TestCollectTombstoneKeepsOlderLayouts(t *testing.T) {
	sc := &shiftedCluster{fakeCluster: newFakeCluster(12)}
	l, _ := newTestLayerN(t, 12, func(c *Config) { c.Cluster = olderShifted{sc} })
	key := "moved"
	old := randBytes(5, 2*testBlock)
	put(t, l, key, old)
	sc.relayout(6) // six other peers: the old copies are not moved yet
	put(t, l, key, randBytes(6, 100))
	if err := l.DeleteObject(context.Background(), testBucket, key); err != nil {
		t.Fatal(err)
	}
	got, err := l.CollectTombstone(context.Background(), testBucket, key, time.Now().Add(time.Hour))
	if err != nil || got {
		t.Fatalf("collect = %v, %v; want kept while an older layout holds a live version", got, err)
	}
	_, err = get(l, key)
	wantErr(t, err, ErrObjectNotFound)
}

// collectOnce runs one collector pass with no rate limit and returns how
// many tombstones it removed.
func collectOnce(t *testing.T, l *Layer, grace time.Duration) uint64 {
	t.Helper()
	q := NewRepairQueue(RepairQueueConfig{TombstoneGrace: grace})
	tick := make(chan time.Time)
	close(tick)
	n, err := q.collectPass(context.Background(), l, tick)
	if err != nil {
		t.Fatalf("collect pass: %v", err)
	}
	if st := q.Stats(); st.Collected != n {
		t.Fatalf("collect pass returned %d, stats say %d", n, st.Collected)
	}
	return n
}

// The collector removes tombstones once they are complete and old enough;
// those a delete left short wait for the scanner to complete them.
func TestCollectorCollectsTombstones(t *testing.T) {
	l, fc := newTestLayer(t)
	var keys []string
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		keys = append(keys, k)
		put(t, l, k, randBytes(uint64(i), 200+i*testBlock))
		if i%2 == 0 {
			deleteWithout(t, l, fc, k)
		} else {
			deleteWithout(t, l, fc, k, 0, 3)
		}
	}
	put(t, l, "live", randBytes(7, 100))
	if n := collectOnce(t, l, time.Hour); n != 0 {
		t.Fatalf("collected %d tombstones younger than the grace period", n)
	}
	const grace = time.Nanosecond // every tombstone is old enough
	for _, p := range fc.peers {
		p.listed.Store(0)
	}
	if n := collectOnce(t, l, grace); n != 3 {
		t.Fatalf("first pass collected %d tombstones, want the 3 complete ones", n)
	}
	for id, p := range fc.peers {
		if n := p.listed.Load(); n != 0 {
			t.Fatalf("the collector listed %d keys of %s: it must read only tombstones", n, id)
		}
	}
	if n := collectOnce(t, l, grace); n != 0 {
		t.Fatalf("second pass collected %d tombstones, want none before the scanner completes the others", n)
	}
	if st := scanOnce(t, l, grace); st.Collected != 0 {
		t.Fatalf("the scanner collected %d tombstones; collecting is the collector's job", st.Collected)
	}
	if n := collectOnce(t, l, grace); n != 2 {
		t.Fatalf("pass after the scan collected %d tombstones, want the 2 it completed", n)
	}
	for _, k := range keys {
		if held, _ := records(fc, k); held != 0 {
			t.Fatalf("%s: %d records left", k, held)
		}
		_, err := get(l, k)
		wantErr(t, err, ErrObjectNotFound)
	}
	mustGet(t, l, "live", randBytes(7, 100))
}
