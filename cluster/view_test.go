package cluster

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"tessera/cluster/ring"
	"tessera/meta"
)

// fakeMembership is a Membership the test edits directly.
type fakeMembership struct {
	mu      sync.Mutex
	ms      map[string]Member
	cur     Epoch
	older   []Epoch
	settled uint64
	gen     uint64
}

func (f *fakeMembership) put(m Member) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ms == nil {
		f.ms = map[string]Member{}
	}
	f.ms[m.ID] = m
}

func (f *fakeMembership) Peers() []Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Member
	for _, m := range f.ms {
		if m.Role == RolePeer {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// Layouts reports a new generation on every call: the test edits the
// fields directly.
func (f *fakeMembership) Layouts() (Layouts, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	return Layouts{Cur: f.cur, Older: f.older, Settled: f.settled}, f.gen
}

func (f *fakeMembership) Member(id string) (Member, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.ms[id]
	return m, ok
}

func peerMember(id, zone string, st State) Member {
	return Member{NodeMeta: NodeMeta{ID: id, Role: RolePeer, Zone: zone}, State: st}
}

func TestViewRebuildsOnlyOnPeerSetChange(t *testing.T) {
	f := &fakeMembership{}
	for _, id := range []string{"p1", "p2", "p3"} {
		f.put(peerMember(id, "", StateAlive))
	}
	f.put(Member{NodeMeta: NodeMeta{ID: "gw", Role: RoleGateway}})
	v := NewView(f, ViewConfig{})
	r1 := v.Ring()
	if got := v.Peers(); !slices.Equal(got, []meta.PeerID{"p1", "p2", "p3"}) {
		t.Fatalf("Peers = %v", got)
	}

	steps := []struct {
		name    string
		change  func()
		rebuild bool
	}{
		{"free bytes change", func() { m := peerMember("p1", "", StateAlive); m.Free = 7; f.put(m) }, false},
		{"peer dies", func() { f.put(peerMember("p2", "", StateDead)) }, false},
		{"gateway joins", func() { f.put(Member{NodeMeta: NodeMeta{ID: "gw2", Role: RoleGateway}}) }, false},
		{"zone change", func() { f.put(peerMember("p3", "z", StateAlive)) }, true},
		{"peer joins", func() { f.put(peerMember("p4", "", StateAlive)) }, true},
	}
	prev := r1
	for _, s := range steps {
		s.change()
		cur := v.Ring()
		if rebuilt := cur != prev; rebuilt != s.rebuild {
			t.Fatalf("%s: rebuilt = %v, want %v", s.name, rebuilt, s.rebuild)
		}
		prev = cur
	}
	if got := v.Peers(); !slices.Equal(got, []meta.PeerID{"p1", "p2", "p3", "p4"}) {
		t.Fatalf("Peers = %v, want the dead peer kept", got)
	}
	if m, ok := v.Member("p2"); !ok || m.State != StateDead {
		t.Fatalf("Member(p2) = %+v, %v", m, ok)
	}
}

func TestViewPlacement(t *testing.T) {
	f := &fakeMembership{}
	for _, id := range []string{"p1", "p2", "p3", "p4"} {
		f.put(peerMember(id, "", StateAlive))
	}
	f.put(peerMember("", "", StateAlive)) // a nameless member is ignored
	v := NewView(f, ViewConfig{})
	got, err := v.Placement("bkt", "dir/key", 4)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := v.Ring().Placement("bkt/dir/key", 4)
	if !slices.Equal(got, want) {
		t.Fatalf("Placement = %v, ring says %v", got, want)
	}
	// Every version of a key is placed with the key.
	for _, id := range []string{meta.NewVersionID(1), meta.NewVersionID(2)} {
		vp, err := v.Placement("bkt", meta.VersionKey("dir/key", id), 4)
		if err != nil || !slices.Equal(vp, want) {
			t.Fatalf("Placement of version %s = %v, %v; want the key's %v", id, vp, err, want)
		}
	}
	if _, err := v.Placement("bkt", "k", 5); !errors.Is(err, ring.ErrNotEnoughPeers) {
		t.Fatalf("n > peers: err = %v", err)
	}
	empty := NewView(&fakeMembership{}, ViewConfig{})
	if _, err := empty.Placement("b", "k", 1); !errors.Is(err, ring.ErrNotEnoughPeers) {
		t.Fatalf("no peers: err = %v", err)
	}
}

// replayMembership answers Layouts from a script, so a test can hand the
// view an older generation after a newer one: what a caller that read
// the Layouts just before a change, and took the view's lock just after
// another caller applied it, does.
type replayMembership struct {
	*fakeMembership
	script []Layouts
	gens   []uint64
}

func (r *replayMembership) Layouts() (Layouts, uint64) {
	l, g := r.script[0], r.gens[0]
	if len(r.script) > 1 {
		r.script, r.gens = r.script[1:], r.gens[1:]
	}
	return l, g
}

func TestViewEpochNeverGoesBack(t *testing.T) {
	f := &fakeMembership{}
	for _, id := range []string{"p1", "p2", "p3"} {
		f.put(peerMember(id, "", StateAlive))
	}
	ep := func(n uint64) Epoch {
		e := Epoch{Number: n}
		for _, id := range []string{"p1", "p2", "p3"} {
			e.Peers = append(e.Peers, EpochPeer{ID: id, Weight: 1, Vnodes: 64})
		}
		return e
	}
	one, two := Layouts{Cur: ep(1)}, Layouts{Cur: ep(2), Older: []Epoch{ep(1)}}
	cases := []struct {
		name   string
		script []Layouts
		gens   []uint64
		want   uint64
	}{
		{"in order", []Layouts{one, two}, []uint64{1, 2}, 2},
		{"a late reader of the old generation", []Layouts{one, two, one}, []uint64{1, 2, 1}, 2},
		{"the same generation again", []Layouts{two, two}, []uint64{2, 2}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := NewView(&replayMembership{fakeMembership: f, script: tc.script, gens: tc.gens}, ViewConfig{})
			for range tc.script {
				v.Ring()
			}
			if got := v.EpochNumber(); got != tc.want {
				t.Fatalf("epoch %d, want %d", got, tc.want)
			}
		})
	}
}

// A peer an epoch gives no tokens (one being drained) is Leaving: still
// on the ring, never placed.
func TestViewLeaving(t *testing.T) {
	f := &fakeMembership{}
	e := Epoch{Number: 3}
	for _, id := range []string{"p1", "p2", "p3", "p4"} {
		f.put(peerMember(id, "", StateAlive))
		w, vn := 1.0, 64
		if id == "p3" {
			w, vn = 0, 0
		}
		e.Peers = append(e.Peers, EpochPeer{ID: id, Weight: w, Vnodes: vn})
	}
	v := NewView(&replayMembership{fakeMembership: f, script: []Layouts{{Cur: e}}, gens: []uint64{1}}, ViewConfig{})
	if got := v.Leaving(); !slices.Equal(got, []meta.PeerID{"p3"}) {
		t.Fatalf("Leaving = %v, want [p3]", got)
	}
	if !slices.Contains(v.Peers(), "p3") {
		t.Fatalf("the leaving peer is off the ring: %v", v.Peers())
	}
	for i := range 50 {
		if ps, _ := v.Placement("b", strconv.Itoa(i), 3); slices.Contains(ps, "p3") {
			t.Fatalf("key %d placed on the leaving peer: %v", i, ps)
		}
	}
	if got := NewView(&replayMembership{fakeMembership: f, script: []Layouts{{Cur: func() Epoch {
		e := e
		e.Peers = slices.Clone(e.Peers)
		e.Peers[2].Weight, e.Peers[2].Vnodes = 1, 64
		return e
	}()}}, gens: []uint64{1}}, ViewConfig{}).Leaving(); len(got) != 0 {
		t.Fatalf("Leaving = %v with every peer weighted", got)
	}
}
