package cluster

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"tessera/meta"
)

// layout returns epoch n whose peer a has v tokens: records with the
// same v place keys alike whatever their number.
func layout(n uint64, v int) Epoch {
	return Epoch{Number: n, Peers: []EpochPeer{{ID: "a", Weight: 1, Vnodes: v}, {ID: "b", Weight: 1, Vnodes: 4}}}
}

func numbers(es []Epoch) []uint64 {
	out := []uint64{}
	for _, e := range es {
		out = append(out, e.Number)
	}
	return out
}

func newTestEpochs(file string) *epochs {
	return newEpochs(file, newRegistry(), zerolog.Nop(), func() int { return 1 })
}

// Every layout data may still sit on is kept until the data mover says
// it has left; the newest older one always is.
func TestLayoutsKeptUntilSettled(t *testing.T) {
	e := newTestEpochs("")
	steps := []struct {
		name    string
		do      func()
		cur     uint64
		older   []uint64
		settled uint64
	}{
		{"first epoch", func() { e.adopt(layout(1, 1), "t") }, 1, []uint64{}, 0},
		{"second", func() { e.adopt(layout(2, 2), "t") }, 2, []uint64{1}, 0},
		{"third before data moved", func() { e.adopt(layout(3, 3), "t") }, 3, []uint64{2, 1}, 0},
		{"a stale record changes nothing", func() { e.adopt(layout(2, 9), "t") }, 3, []uint64{2, 1}, 0},
		{"data left epoch 1", func() { e.settle(2) }, 3, []uint64{2}, 2},
		{"settled never goes back", func() { e.settle(1) }, 3, []uint64{2}, 2},
		{"moved to the current one: the previous stays", func() { e.settle(3) }, 3, []uint64{2}, 3},
		{"back to layout 2 under a new number", func() { e.adopt(layout(4, 2), "t") }, 4, []uint64{3}, 3},
	}
	for _, s := range steps {
		s.do()
		l := e.layouts()
		if l.Cur.Number != s.cur || !slices.Equal(numbers(l.Older), s.older) || l.Settled != s.settled {
			t.Fatalf("%s: cur %d older %v settled %d, want %d %v %d",
				s.name, l.Cur.Number, numbers(l.Older), l.Settled, s.cur, s.older, s.settled)
		}
	}
}

func TestLayoutsNormalize(t *testing.T) {
	many := []Epoch{}
	for n := uint64(1); n <= maxOlder+3; n++ {
		many = append(many, layout(n, int(n)))
	}
	tests := []struct {
		name  string
		in    Layouts
		older []uint64
		lost  int
	}{
		{"sorted newest first", Layouts{Cur: layout(5, 5), Older: []Epoch{layout(2, 2), layout(4, 4), layout(3, 3)}}, []uint64{4, 3, 2}, 0},
		{"same placement as current dropped", Layouts{Cur: layout(5, 5), Older: []Epoch{layout(4, 5), layout(3, 3)}}, []uint64{3}, 0},
		{"one of each placement, the newest", Layouts{Cur: layout(5, 5), Older: []Epoch{layout(2, 3), layout(3, 3)}}, []uint64{3}, 0},
		{"duplicates merge", Layouts{Cur: layout(5, 5), Older: []Epoch{layout(3, 3), layout(3, 3)}}, []uint64{3}, 0},
		{"not older than current dropped", Layouts{Cur: layout(5, 5), Older: []Epoch{layout(6, 6), layout(4, 4)}}, []uint64{4}, 0},
		{"no current, no older", Layouts{Older: []Epoch{layout(1, 1)}}, []uint64{}, 0},
		{"settled prunes all but the newest", Layouts{Cur: layout(9, 9), Older: many[:8], Settled: 7}, []uint64{8, 7}, 0},
		{"bounded", Layouts{Cur: layout(20, 20), Older: many}, []uint64{11, 10, 9, 8, 7, 6, 5, 4}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.in
			lost := l.normalize()
			if !slices.Equal(numbers(l.Older), tt.older) || len(lost) != tt.lost {
				t.Fatalf("older %v lost %d, want %v %d", numbers(l.Older), len(lost), tt.older, tt.lost)
			}
		})
	}
}

// A restarted node comes back with every layout and how far data moved;
// a file of the former format (one bare epoch record) still loads.
func TestLayoutsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.epoch")
	e := newTestEpochs(file)
	for n := uint64(1); n <= 4; n++ {
		e.adopt(layout(n, int(n)), "t")
	}
	e.settle(2)
	want := e.layouts()
	if got := newTestEpochs(file).layouts(); !same(got, want) {
		t.Fatalf("reloaded %d %v settled %d, want %d %v %d",
			got.Cur.Number, numbers(got.Older), got.Settled, want.Cur.Number, numbers(want.Older), want.Settled)
	}

	old := filepath.Join(dir, "old.epoch")
	b, _ := encodeEpoch(layout(7, 7))
	newTestEpochs(old).persist(b)
	if got := newTestEpochs(old).layouts(); got.Cur.Number != 7 || len(got.Older) != 0 {
		t.Fatalf("former file format: cur %d older %v", got.Cur.Number, numbers(got.Older))
	}
}

// A node that joins late (a restarted gateway) learns the older layouts
// from another's push/pull state, not only the current epoch.
func TestLayoutsMergeFromState(t *testing.T) {
	a := newTestEpochs("")
	for n := uint64(1); n <= 3; n++ {
		a.adopt(layout(n, int(n)), "t")
	}
	b := newTestEpochs("")
	b.receive(a.localState(), "push/pull")
	if got, want := b.layouts(), a.layouts(); !same(got, want) {
		t.Fatalf("merged %d %v, want %d %v", got.Cur.Number, numbers(got.Older), want.Cur.Number, numbers(want.Older))
	}
	// A bare epoch broadcast adds the layout it replaces to the older ones.
	msg, _ := encodeEpoch(layout(4, 4))
	b.receive(msg, "gossip")
	if got := numbers(b.layouts().Older); !slices.Equal(got, []uint64{3, 2, 1}) {
		t.Fatalf("older after a broadcast: %v", got)
	}
	// An epoch this node skipped (it heard of a newer one first) joins its
	// older layouts when another node still on it says so.
	c := newTestEpochs("")
	c.adopt(layout(3, 3), "t")
	c.adopt(layout(5, 5), "t")
	d := newTestEpochs("")
	d.adopt(layout(4, 4), "t")
	c.receive(d.localState(), "push/pull")
	if got := numbers(c.layouts().Older); !slices.Equal(got, []uint64{4, 3}) {
		t.Fatalf("older after hearing a skipped epoch: %v", got)
	}
	// Settled travels too, and prunes.
	a.settle(3)
	b.receive(a.localState(), "push/pull")
	if l := b.layouts(); l.Settled != 3 || !slices.Equal(numbers(l.Older), []uint64{3}) {
		t.Fatalf("after a settled state: settled %d older %v", l.Settled, numbers(l.Older))
	}
}

// The data mover's word reaches every node through gossiped stats and
// prunes their older layouts.
func TestSettledSpreadsByStats(t *testing.T) {
	p := startNode(t, testConfig("p", RolePeer, &metaBox{m: NodeMeta{APIAddr: "127.0.0.1:1"}}))
	for n := uint64(1); n <= 3; n++ {
		p.meta.epochs.adopt(layout(n, int(n)), "t")
	}
	gwCfg := testConfig("gw", RoleGateway, &metaBox{}, p.Addr())
	gwCfg.Stats = func() Stats { return Stats{Settled: 3} }
	gw := startNode(t, gwCfg)
	eventually(t, "the peer hears the gateway's settled epoch", func() bool { return p.Settled() == 3 })
	if _, older := p.Epoch(); !slices.Equal(numbers(older), []uint64{2}) {
		t.Fatalf("peer's older layouts %v, want [2]", numbers(older))
	}
	eventually(t, "the gateway has the layouts", func() bool {
		cur, older := gw.Epoch()
		return cur.Number == 3 && slices.Equal(numbers(older), []uint64{2})
	})
}

// A view's older placements: one per older layout that places the key
// elsewhere, newest first, plus the membership ring served before the
// first epoch until data is known to have moved.
func TestViewOlderPlacements(t *testing.T) {
	f := &fakeMembership{}
	for i := range 8 {
		f.put(peerMember(fmt.Sprintf("p%d", i), "", StateAlive))
	}
	v := NewView(f, ViewConfig{})
	v.Ring() // the membership ring, before any epoch
	ep := func(n uint64, ids ...int) Epoch {
		e := Epoch{Number: n}
		for _, i := range ids {
			e.Peers = append(e.Peers, EpochPeer{ID: fmt.Sprintf("p%d", i), Weight: 1, Vnodes: 64})
		}
		return e
	}
	f.cur = ep(1, 0, 1, 2, 3)
	v.Ring()
	f.cur, f.older = ep(3, 4, 5, 6, 7), []Epoch{ep(2, 2, 3, 4, 5), ep(1, 0, 1, 2, 3)}
	on := func(ps []meta.PeerID, ids ...int) bool {
		for _, p := range ps {
			if !slices.ContainsFunc(ids, func(i int) bool { return string(p) == fmt.Sprintf("p%d", i) }) {
				return false
			}
		}
		return true
	}
	got := v.OlderPlacements("b", "k", 3)
	if len(got) != 3 || !on(got[0], 2, 3, 4, 5) || !on(got[1], 0, 1, 2, 3) {
		t.Fatalf("older placements %v: want epoch 2's, epoch 1's, then the membership ring's", got)
	}
	f.settled = 2
	f.older = f.older[:1]
	if got := v.OlderPlacements("b", "k", 3); len(got) != 1 || !on(got[0], 2, 3, 4, 5) {
		t.Fatalf("after data moved: %v, want only epoch 2's", got)
	}
}

func FuzzDecodeLayouts(f *testing.F) {
	good, _ := encodeLayouts(Layouts{Cur: layout(3, 3), Older: []Epoch{layout(2, 2), layout(1, 1)}, Settled: 1})
	bare, _ := encodeEpoch(layout(2, 2))
	f.Add(good)
	f.Add(bare)
	f.Add([]byte{msgLayouts, '{', '}'})
	f.Add(append([]byte{msgLayouts}, `{"c":{"n":2,"p":[{"id":"a","v":1}]},"o":[{"n":1,"p":[{"id":"b","v":1},{"id":"a","v":1}]}]}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLayouts(b)
		if err != nil {
			return
		}
		for _, e := range append([]Epoch{l.Cur}, l.Older...) {
			if _, err := e.Ring(); err != nil {
				t.Fatalf("accepted a layout that builds no ring: %v", err)
			}
		}
		if l.normalize(); len(l.Older) > maxOlder {
			t.Fatalf("%d older layouts after normalize", len(l.Older))
		}
	})
}
