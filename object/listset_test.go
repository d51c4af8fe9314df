package object

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tessera/meta"
)

// TestListAsksTheReadSet checks that a listing every peer agrees on is
// answered by all peers but the default code's parity, and that the read
// set rotates so that every peer takes its share.
func TestListAsksTheReadSet(t *testing.T) {
	l, fc := newTestLayer(t)
	for d := range 5 {
		put(t, l, fmt.Sprintf("d%d/k", d), []byte("x"))
	}
	askedEver := map[meta.PeerID]bool{}
	for range len(fc.ids) {
		for _, p := range fc.peers {
			p.listed.Store(0)
		}
		res, err := l.ListObjects(context.Background(), testBucket, ListOptions{Delimiter: "/", MaxKeys: -1})
		if err != nil || len(res.Prefixes) != 5 {
			t.Fatalf("%q, %v", res.Prefixes, err)
		}
		asked := 0
		for id, p := range fc.peers {
			if p.listed.Load() > 0 {
				asked++
				askedEver[id] = true
			}
		}
		if want := len(fc.ids) - 2; asked != want {
			t.Fatalf("%d peers asked, want %d", asked, want)
		}
	}
	if len(askedEver) != len(fc.ids) {
		t.Fatalf("over %d listings only %d peers were asked", len(fc.ids), len(askedEver))
	}
}

// TestListReadSetDecidesAsEveryPeer checks listings whose read set may
// not decide them alone, over every rotation of the read set: a version
// of a code whose k is no more than the peers left out, newer on peers
// the read set may miss; an overwrite and a delete that missed two peers;
// and a read-set peer that fails.
func TestListReadSetDecidesAsEveryPeer(t *testing.T) {
	l, fc := newTestLayer(t, func(c *Config) { c.Classes = map[string]meta.Code{"SMALL": {K: 1, M: 2}} })
	ctx := context.Background()
	// A SMALL key whose two first holders sit side by side in the peer
	// order, so that one rotation of the read set leaves both out.
	key := ""
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("small-%d", i)
		h := placementPeers(fc, k, 3)
		a, b := slices.Index(fc.ids, h[0].id), slices.Index(fc.ids, h[1].id)
		if (a+1)%len(fc.ids) == b || (b+1)%len(fc.ids) == a {
			key = k
		}
	}
	putSmall := func(data []byte) {
		t.Helper()
		if _, err := l.PutObject(ctx, testBucket, key, bytes.NewReader(data), int64(len(data)), PutOptions{StorageClass: "SMALL"}); err != nil {
			t.Fatal(err)
		}
	}
	putSmall([]byte("old"))
	third := placementPeers(fc, key, 3)[2]
	third.setFault(faultDown)
	putSmall([]byte("newer version"))
	fc.heal()

	put(t, l, "over", []byte("old"))
	put(t, l, "gone", []byte("old"))
	h := placementPeers(fc, "over", 6)
	h[0].setFault(faultDown)
	h[1].setFault(faultDown)
	put(t, l, "over", []byte("newer"))
	fc.heal()
	g := placementPeers(fc, "gone", 6)
	g[2].setFault(faultDown)
	g[3].setFault(faultDown)
	if err := l.DeleteObject(ctx, testBucket, "gone"); err != nil {
		t.Fatal(err)
	}
	fc.heal()

	want := map[string]int64{key: int64(len("newer version")), "over": int64(len("newer"))}
	for _, down := range append([]meta.PeerID{""}, fc.ids...) {
		if down != "" {
			fc.peers[down].setFault(faultDown)
		}
		// Key by key, so that one key's undecided lines do not send the
		// whole page to every peer; each over every rotation.
		for _, k := range []string{key, "over", "gone"} {
			for turn := range len(fc.ids) {
				res, err := l.ListObjects(ctx, testBucket, ListOptions{Prefix: k, MaxKeys: -1})
				if err != nil {
					t.Fatalf("peer %q down, turn %d: %v", down, turn, err)
				}
				got := map[string]int64{}
				for _, o := range res.Objects {
					got[o.Key] = o.Size
				}
				if w, ok := want[k]; (ok && (len(got) != 1 || got[k] != w)) || (!ok && len(got) != 0) {
					t.Fatalf("peer %q down, turn %d: listed %v under %q, want %v", down, turn, got, k, want)
				}
			}
		}
		fc.heal()
	}
}

// TestListReadSetAvoidsStalledPeers checks that the read set takes the
// peers this layer trusts first and names each peer once, also when a
// stalled peer's hold is over and it is let through as a probe.
func TestListReadSetAvoidsStalledPeers(t *testing.T) {
	l, fc := newTestLayer(t)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l.health.now = clk.now
	ids := fc.ids
	l.health.stall(ids[0])
	clk.advance(l.cfg.StallHold + time.Second) // ids[0]'s hold is over: a probe
	for _, id := range ids[1:4] {
		l.health.stall(id)
	}
	// The next listing's rotation starts at the first peer, so the probe
	// is met first on the second pass too.
	l.listTurn.Store(uint64(len(ids) - 1))
	for turn := range len(ids) {
		set, unasked := l.listReadSet()
		seen := map[meta.PeerID]bool{}
		for _, p := range set {
			if seen[p] {
				t.Fatalf("turn %d: read set %v names %s twice", turn, set, p)
			}
			seen[p] = true
		}
		if len(set) != len(ids)-2 || unasked != 2 || !seen[ids[4]] || !seen[ids[5]] {
			t.Fatalf("turn %d: read set %v leaving out %d; want four peers with %s and %s", turn, set, unasked, ids[4], ids[5])
		}
		if turn == 0 && !seen[ids[0]] {
			t.Fatalf("read set %v leaves out %s, whose hold is over", set, ids[0])
		}
	}
}
