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

// collector gathers the layer's repair reports.
type collector struct {
	mu    sync.Mutex
	items []RepairItem
}

func (c *collector) add(it RepairItem) {
	c.mu.Lock()
	c.items = append(c.items, it)
	c.mu.Unlock()
}

func (c *collector) keys() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for _, it := range c.items {
		out[it.Key] = true
	}
	return out
}

// fullyRedundant fails unless every peer of key's distribution holds the
// record of stamp as its own shard, with every part file for stored data.
func fullyRedundant(t *testing.T, fc *fakeCluster, key string) {
	t.Helper()
	var want *meta.Object
	for _, p := range fc.peers {
		p.mu.Lock()
		o := p.held(testBucket, key)
		p.mu.Unlock()
		if o != nil && (want == nil || want.Stamp.Less(o.Stamp)) {
			want = o
		}
	}
	if want == nil {
		t.Fatalf("%s: no record anywhere", key)
	}
	for i, id := range want.Distribution {
		p := fc.peers[id]
		p.mu.Lock()
		o := p.held(testBucket, key)
		var missingPart int
		if o != nil && !o.Inlined && !o.Deleted {
			for _, pt := range partsOf(o) {
				if _, ok := p.shards[shardKey(testBucket, key, o.Stamp, pt.Number)]; !ok {
					missingPart = pt.Number
				}
			}
		}
		p.mu.Unlock()
		switch {
		case o == nil:
			t.Fatalf("%s: shard %d on %s: no record", key, i, id)
		case o.Stamp != want.Stamp || o.ShardIndex != i:
			t.Fatalf("%s: shard %d on %s: holds %v shard %d, want %v", key, i, id, o.Stamp, o.ShardIndex, want.Stamp)
		case missingPart != 0:
			t.Fatalf("%s: shard %d on %s: part %d missing", key, i, id, missingPart)
		}
	}
}

func TestRepairAfterDegradedWrites(t *testing.T) {
	col := &collector{}
	l, fc := newTestLayer(t, func(c *Config) { c.Repair = col.add })
	ctx := context.Background()
	sizes := map[string]int{"inline": 300, "empty": 0, "one-block": 50 << 10, "blocks": 3*testBlock + 17}
	// Overwritten while degraded, and a delete while degraded.
	put(t, l, "blocks", randBytes(9, 1000))
	put(t, l, "gone", randBytes(8, 5000))
	fc.peers["p1"].setFault(faultDown)
	fc.peers["p4"].setFault(faultDown)
	data := map[string][]byte{}
	for k, n := range sizes {
		data[k] = randBytes(uint64(n)+1, n)
		put(t, l, k, data[k])
	}
	if err := l.DeleteObject(ctx, testBucket, "gone"); err != nil {
		t.Fatal(err)
	}
	reported := col.keys()
	for k := range sizes {
		if !reported[k] {
			t.Errorf("degraded write of %s not reported for repair", k)
		}
	}
	// While the peers are down, repair cannot finish and says so.
	if _, err := l.RepairObject(ctx, testBucket, "blocks", RepairOptions{}); !errors.Is(err, ErrRepairIncomplete) {
		t.Fatalf("repair with peers down: err = %v, want ErrRepairIncomplete", err)
	}
	fc.heal()
	for _, k := range []string{"inline", "empty", "one-block", "blocks", "gone"} {
		res, err := l.RepairObject(ctx, testBucket, k, RepairOptions{})
		if err != nil {
			t.Fatalf("repair %s: %v", k, err)
		}
		if len(res.Repaired) == 0 {
			t.Errorf("repair %s rewrote nothing", k)
		}
		fullyRedundant(t, fc, k)
	}
	// A second pass finds nothing to do.
	for k := range sizes {
		res, err := l.RepairObject(ctx, testBucket, k, RepairOptions{})
		if err != nil || len(res.Repaired) != 0 {
			t.Fatalf("second repair of %s: %v, rewrote %v", k, err, res.Repaired)
		}
	}
	// Two other peers down: everything still reads, the delete holds.
	fc.peers["p0"].setFault(faultDown)
	fc.peers["p2"].setFault(faultDown)
	for k, want := range data {
		mustGet(t, l, k, want)
	}
	if _, err := l.HeadObject(ctx, testBucket, "gone"); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("deleted object: err = %v, want not found", err)
	}
}

func TestRepairRewritesCorruptShard(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	want := randBytes(3, 2*testBlock+99)
	put(t, l, "rot", want)
	victim := placementPeers(fc, "rot", 6)[2]
	o := victim.held(testBucket, "rot")
	sk := shardKey(testBucket, "rot", o.Stamp, 1)
	victim.mu.Lock()
	good := append([]byte(nil), victim.shards[sk]...)
	victim.mu.Unlock()
	corrupt := func() {
		bad := append([]byte(nil), good...)
		bad[len(bad)/2] ^= 0x01
		victim.mu.Lock()
		victim.shards[sk] = bad
		victim.mu.Unlock()
	}

	// A light pass trusts the record; a suspect report (a failed read or
	// a peer's scrub finding) reads the shard and rewrites it.
	corrupt()
	res, err := l.RepairObject(ctx, testBucket, "rot", RepairOptions{})
	if err != nil || len(res.Repaired) != 0 {
		t.Fatalf("light repair: %v, rewrote %v", err, res.Repaired)
	}
	for _, opts := range []RepairOptions{{Stamp: o.Stamp, Suspect: []int{2}}, {Stamp: o.Stamp, Suspect: []int{0, 1, 2, 3, 4, 5}}} {
		corrupt()
		res, err := l.RepairObject(ctx, testBucket, "rot", opts)
		if err != nil || len(res.Repaired) != 1 || res.Repaired[0] != 2 {
			t.Fatalf("repair %+v: %v, rewrote %v", opts, err, res.Repaired)
		}
		victim.mu.Lock()
		fixed := string(victim.shards[sk]) == string(good)
		victim.mu.Unlock()
		if !fixed {
			t.Fatalf("repair %+v: shard not restored byte for byte", opts)
		}
	}
	mustGet(t, l, "rot", want)
}

func TestRepairRewritesCorruptInlineShard(t *testing.T) {
	l, fc := newTestLayer(t)
	want := randBytes(4, 700)
	put(t, l, "small", want)
	victim := placementPeers(fc, "small", 6)[5]
	victim.mu.Lock()
	o := victim.held(testBucket, "small")
	o.Inline[3] ^= 0xff
	raw, err := meta.MarshalObject(o)
	if err != nil {
		t.Fatal(err)
	}
	victim.setRecord(o, raw)
	victim.mu.Unlock()
	res, err := l.RepairObject(context.Background(), testBucket, "small", RepairOptions{})
	if err != nil || len(res.Repaired) != 1 || res.Repaired[0] != 5 {
		t.Fatalf("repair: %v, rewrote %v", err, res.Repaired)
	}
	for _, i := range []int{0, 1} {
		placementPeers(fc, "small", 6)[i].setFault(faultDown)
	}
	mustGet(t, l, "small", want)
}

// A repair must never replace a newer version a peer already holds, even
// one that has not (yet) reached a quorum.
func TestRepairNeverUndoesNewerVersion(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "k", randBytes(5, 400))
	peers := placementPeers(fc, "k", 6)
	o := peers[0].held(testBucket, "k")
	newer := *o
	newer.Stamp = meta.Stamp{Nanos: o.Stamp.Nanos + 1, Writer: "other"}
	newer.ShardIndex = 3
	raw, err := meta.MarshalObject(&newer)
	if err != nil {
		t.Fatal(err)
	}
	peers[3].mu.Lock()
	peers[3].setRecord(&newer, raw)
	peers[3].mu.Unlock()
	peers[4].mu.Lock()
	delete(peers[4].records, objKey(testBucket, "k"))
	peers[4].mu.Unlock()
	res, err := l.RepairObject(context.Background(), testBucket, "k", RepairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Repaired) != "[4]" {
		t.Fatalf("repaired %v, want [4]", res.Repaired)
	}
	if got := peers[3].held(testBucket, "k"); got.Stamp != newer.Stamp {
		t.Fatalf("peer with newer version now holds %v", got.Stamp)
	}
}

func TestRepairQueueRetriesUntilPeersReturn(t *testing.T) {
	q := NewRepairQueue(RepairQueueConfig{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	l, fc := newTestLayer(t, func(c *Config) { c.Repair = q.Enqueue })
	q.Start(l)
	defer q.Close()
	fc.peers["p2"].setFault(faultDown)
	keys := []string{"a", "b", "c", "d", "e"}
	data := map[string][]byte{}
	for i, k := range keys {
		data[k] = randBytes(uint64(i+10), 3000*i+100)
		put(t, l, k, data[k])
	}
	waitFor(t, func() bool { return q.Stats().Failed >= uint64(len(keys)) })
	if p := q.Pending(); p != len(keys) {
		t.Fatalf("pending = %d while the peer is down, want %d", p, len(keys))
	}
	fc.heal()
	q.Kick()
	waitFor(t, func() bool { return q.Pending() == 0 })
	for _, k := range keys {
		fullyRedundant(t, fc, k)
	}
	if s := q.Stats(); s.Repaired != uint64(len(keys)) {
		t.Fatalf("stats %+v: want %d repaired", s, len(keys))
	}
}

func TestRepairScannerFindsUnreportedDamage(t *testing.T) {
	q := NewRepairQueue(RepairQueueConfig{ScanInterval: 10 * time.Millisecond, ScanRate: 1000})
	l, fc := newTestLayer(t) // no Repair hook: only the scanner can notice
	fc.peers["p3"].setFault(faultDown)
	for i := range 20 {
		put(t, l, fmt.Sprintf("k%02d", i), randBytes(uint64(i), 2000))
	}
	fc.heal()
	q.Start(l)
	defer q.Close()
	waitFor(t, func() bool { return q.Stats().ScanPasses >= 2 })
	for i := range 20 {
		fullyRedundant(t, fc, fmt.Sprintf("k%02d", i))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
