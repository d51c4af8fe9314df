package object

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tessera/meta"
)

// shiftedCluster places keys like fakeCluster, rotated by shift peers; a
// layout change is a new shift, older ones kept in older, newest first.
type shiftedCluster struct {
	*fakeCluster
	shift int
	older []int
}

func (c *shiftedCluster) place(bucket, key string, n, shift int) []meta.PeerID {
	ps, _ := c.fakeCluster.Placement(bucket, key, n)
	out := make([]meta.PeerID, n)
	for i, p := range ps {
		idx := 0
		for j, id := range c.ids {
			if id == p {
				idx = j
			}
		}
		out[i] = c.ids[(idx+shift)%len(c.ids)]
	}
	return out
}

func (c *shiftedCluster) Placement(bucket, key string, n int) ([]meta.PeerID, error) {
	return c.place(bucket, key, n, c.shift), nil
}

// relayout moves the ring to a new shift, keeping the old one.
func (c *shiftedCluster) relayout(shift int) {
	c.older = append([]int{c.shift}, c.older...)
	c.shift = shift
}

type olderShifted struct{ *shiftedCluster }

func (c olderShifted) OlderPlacements(bucket, key string, n int) [][]meta.PeerID {
	var out [][]meta.PeerID
	for _, s := range c.older {
		if s%len(c.ids) != c.shift%len(c.ids) {
			out = append(out, c.place(bucket, key, n, s))
		}
	}
	return out
}

// After layout changes, objects not yet moved are found where an older
// layout put them, however many layouts ago they were written; without
// those lookups they would not be.
func TestReadsFollowOlderLayouts(t *testing.T) {
	for _, withOlder := range []bool{true, false} {
		sc := &shiftedCluster{fakeCluster: newFakeCluster(9)}
		var cl Cluster = sc
		if withOlder {
			cl = olderShifted{sc}
		}
		l, _ := newTestLayerN(t, 9, func(c *Config) { c.Cluster = cl })
		data := writeObjects(t, l, sc.fakeCluster, 6, 500, 3000)
		sc.relayout(3) // two epochs in quick succession: nothing moved
		for k, v := range writeObjectsFrom(t, l, 6, 6, 700, 2000) {
			data[k] = v
		}
		sc.relayout(6)
		failed := 0
		for k, want := range data {
			got, err := get(l, k)
			if err != nil || string(got) != string(want) {
				failed++
			}
		}
		switch {
		case withOlder && failed > 0:
			t.Fatalf("with the older layouts consulted, %d of %d reads failed", failed, len(data))
		case !withOlder && failed == 0:
			t.Fatal("reads worked without the older layouts: the test cannot tell the lookup matters")
		}
	}
}

// New writes go to the current layout only, so a version an older layout
// holds is not the key's current one until enough of the current
// layout's peers have answered to rule out a newer write there: neither
// a read nor a delete may settle on the old version because the peers
// that hold it answered first.
func TestOlderLayoutAnswersFirst(t *testing.T) {
	sc := &shiftedCluster{fakeCluster: newFakeCluster(12)}
	l, _ := newTestLayerN(t, 12, func(c *Config) { c.Cluster = olderShifted{sc} })
	key := "moved"
	put(t, l, key, randBytes(5, 2*testBlock))
	sc.relayout(6) // six other peers: the old copies are not moved yet
	newer := randBytes(6, 100)
	put(t, l, key, newer)
	cur, _ := sc.Placement(testBucket, key, 6)
	for _, p := range cur {
		sc.peers[p].setDelay(30 * time.Millisecond)
	}
	mustGet(t, l, key, newer)
	if err := l.DeleteObject(context.Background(), testBucket, key); err != nil {
		t.Fatal(err)
	}
	_, err := get(l, key)
	wantErr(t, err, ErrObjectNotFound)
	sc.heal()
	_, err = get(l, key)
	wantErr(t, err, ErrObjectNotFound)
}

// narrowingCluster is fakeCluster whose ring can shrink to its first
// width peers (width 0: all), as an epoch minted before every peer was
// seen; the full ring is then the previous one.
type narrowingCluster struct {
	*fakeCluster
	width int
}

func (c *narrowingCluster) Peers() []meta.PeerID {
	if c.width > 0 {
		return c.ids[:c.width]
	}
	return c.fakeCluster.Peers()
}

func (c *narrowingCluster) Placement(bucket, key string, n int) ([]meta.PeerID, error) {
	if c.width > 0 && n > c.width {
		return nil, fmt.Errorf("%d peers, need %d", c.width, n)
	}
	return c.fakeCluster.Placement(bucket, key, n)
}

func (c *narrowingCluster) OlderPlacements(bucket, key string, n int) [][]meta.PeerID {
	if c.width == 0 {
		return nil
	}
	ps, err := c.fakeCluster.Placement(bucket, key, n)
	if err != nil {
		return nil
	}
	return [][]meta.PeerID{ps}
}

// A new epoch too narrow for the code still lets reads find the objects
// where the previous ring put them.
func TestReadsWhenEpochNarrowerThanCode(t *testing.T) {
	nc := &narrowingCluster{fakeCluster: newFakeCluster(9)}
	l, _ := newTestLayerN(t, 9, func(c *Config) { c.Cluster = nc })
	data := writeObjects(t, l, nc.fakeCluster, 6, 700, 5000)
	nc.width = 5 // the 4+2 code needs 6
	for k, want := range data {
		if got, err := get(l, k); err != nil || string(got) != string(want) {
			t.Fatalf("%s on a 5-peer epoch after a 9-peer ring: %d bytes, %v", k, len(got), err)
		}
	}
}

// writeObjects makes the test bucket on every peer of fc (a layer over a
// wrapped cluster does not) and writes n objects k0..k(n-1) of base,
// base+step, ... bytes, returning their contents.
func writeObjects(t *testing.T, l *Layer, fc *fakeCluster, n, base, step int) map[string][]byte {
	t.Helper()
	for _, p := range fc.peers {
		p.MakeBucket(context.Background(), meta.Bucket{Name: testBucket})
	}
	return writeObjectsFrom(t, l, 0, n, base, step)
}

// writeObjectsFrom writes objects k(first)..k(first+n-1) of base,
// base+step, ... bytes, returning their contents.
func writeObjectsFrom(t *testing.T, l *Layer, first, n, base, step int) map[string][]byte {
	t.Helper()
	data := map[string][]byte{}
	for i := range n {
		k := fmt.Sprintf("k%d", first+i)
		data[k] = randBytes(uint64(first+i), base+i*step)
		put(t, l, k, data[k])
	}
	return data
}

// A layout change that moves three shards of a 4+2 object (more than its
// parity) leaves three staying peers, too few to rebuild the moved shards
// from; the move reads the leaving peers' copies as well, which they keep
// until the last step. Once moved, the object reads from its new
// placement alone.
func TestMigrateMovesMoreThanParity(t *testing.T) {
	for _, size := range []int{300, 2*testBlock + 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			sc := &shiftedCluster{fakeCluster: newFakeCluster(9)}
			l, _ := newTestLayerN(t, 9, func(c *Config) { c.Cluster = olderShifted{sc} })
			data := randBytes(7, size)
			put(t, l, "k", data)
			sc.relayout(3)
			res, err := l.MigrateObject(context.Background(), testBucket, "k")
			if err != nil || len(res.Moved) != 3 {
				t.Fatalf("migrate: %+v, %v; want three shards moved", res, err)
			}
			sc.older = nil // the old layout is forgotten
			mustGet(t, l, "k", data)
		})
	}
}

// leavingShifted is a shiftedCluster whose older layouts are forgotten
// (the move settled) and whose ring still lists the peers in leaving,
// without tokens.
type leavingShifted struct {
	*shiftedCluster
	leaving []meta.PeerID
}

func (c leavingShifted) Leaving() []meta.PeerID { return c.leaving }

// A peer leaving the ring that holds a copy outside the key's current
// distribution (a write placed by the old layout after the move passes
// had looked at its key) has it dropped by the next move of the key,
// when that copy is of the current version or older; a newer copy is a
// write in flight and stays, and so does anything on a peer that is not
// leaving.
func TestMigrateDropsStraysOnLeavingPeers(t *testing.T) {
	cases := []struct {
		name      string
		leaving   bool
		strayNew  bool // the stray is newer than the placed version
		wantStray bool
	}{
		{"older copy on a leaving peer", true, false, false},
		{"newer copy on a leaving peer", true, true, true},
		{"older copy on a peer staying on the ring", false, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := &shiftedCluster{fakeCluster: newFakeCluster(9)}
			old, now := sc.place(testBucket, "k", 6, 0), sc.place(testBucket, "k", 6, 3)
			var x meta.PeerID // in the old placement only
			for _, p := range old {
				if !slices.Contains(now, p) {
					x = p
					break
				}
			}
			lc := leavingShifted{shiftedCluster: sc}
			if tc.leaving {
				lc.leaving = []meta.PeerID{x}
			}
			l, _ := newTestLayerN(t, 9, func(c *Config) { c.Cluster = lc })
			v1, v2 := randBytes(1, 300), randBytes(2, 2*testBlock+5)
			placed := v2
			if tc.strayNew {
				// v1 (inlined) on the new placement, then a newer record
				// on the leaving peer alone: a write there in flight.
				sc.shift, placed = 3, v1
				put(t, l, "k", v1)
				rec, err := sc.peers[now[0]].ReadMeta(context.Background(), testBucket, "k")
				if err != nil || len(rec.Inline) == 0 {
					t.Fatalf("v1 not inlined on %s: %v", now[0], err)
				}
				rec.Stamp.Nanos += int64(time.Second)
				if err := sc.peers[x].Commit(context.Background(), rec, nil); err != nil {
					t.Fatal(err)
				}
			} else {
				put(t, l, "k", v1) // v1 on the old placement, then v2 on the new
				sc.shift = 3
				put(t, l, "k", v2)
			}
			strayBefore, err := sc.peers[x].ReadMeta(context.Background(), testBucket, "k")
			if err != nil {
				t.Fatalf("the stray copy is not there to begin with: %v", err)
			}
			if _, err := l.MigrateObject(context.Background(), testBucket, "k"); err != nil {
				t.Fatal(err)
			}
			stray, err := sc.peers[x].ReadMeta(context.Background(), testBucket, "k")
			if got := err == nil; got != tc.wantStray {
				t.Fatalf("stray copy on %s kept: %v (%v); want %v", x, got, err, tc.wantStray)
			}
			if tc.wantStray && stray.Stamp != strayBefore.Stamp {
				t.Fatalf("stray copy changed from %v to %v", strayBefore.Stamp, stray.Stamp)
			}
			mustGet(t, l, "k", placed)
		})
	}
}
