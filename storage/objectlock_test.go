package storage

import (
	"errors"
	"testing"
	"time"

	"tessera/meta"
	"tessera/objectlock"
)

// A peer refuses, whoever asks, to delete a version under a legal hold or
// a running compliance retention, or to rewrite it with a shorter
// compliance retention; no lock lets other bytes replace the version; a
// governance retention yields to a tombstone carrying the bypass mark
// only; and an expired retention protects nothing.
func TestObjectLockOnThePeer(t *testing.T) {
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newStoreAt(t, time.Hour, clock.now)
	until := clock.now().Add(time.Hour)
	locked := func(key string, n int64, st objectlock.State, data string) *meta.Object {
		o := inlined("bkt", key, stamp(n, "w"), []byte(data))
		o.Headers = map[string]string{}
		st.Apply(o.Headers)
		return o
	}
	comp := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until}}
	gov := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Governance, Until: until}}
	hold := objectlock.State{LegalHold: true, HoldSet: true}
	for key, st := range map[string]objectlock.State{"comp": comp, "gov": gov, "hold": hold} {
		if err := s.Commit(ctx, locked(key, 10, st, "data"), nil); err != nil {
			t.Fatal(err)
		}
	}
	longer := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until.Add(time.Hour)}}
	govFor := func(d time.Duration) objectlock.State {
		return objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Governance, Until: until.Add(d)}}
	}
	bypass := func(o *meta.Object) *meta.Object {
		o.Headers = objectlock.BypassMark()
		return o
	}
	cases := []struct {
		name   string
		next   *meta.Object
		locked bool
	}{
		{"delete under compliance", object("bkt", "comp", stamp(11, "w")), true},
		{"shorter compliance", locked("comp", 12, objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until.Add(-time.Minute)}}, "data"), true},
		{"compliance to governance", locked("comp", 13, gov, "data"), true},
		{"retention removed", locked("comp", 14, objectlock.State{}, "data"), true},
		{"other bytes", locked("comp", 15, comp, "other data"), true},
		{"delete under legal hold", object("bkt", "hold", stamp(11, "w")), true},
		{"longer compliance", locked("comp", 16, longer, "data"), false},
		{"other bytes under legal hold", locked("hold", 12, hold, "other data"), true},
		{"legal hold lifted", locked("hold", 13, objectlock.State{HoldSet: true}, "data"), false},
		{"delete under governance", object("bkt", "gov", stamp(11, "w")), true},
		{"other bytes under governance", locked("gov", 12, gov, "other data"), true},
		{"other bytes under governance, bypassed", bypass(locked("gov", 13, gov, "other data")), true},
		{"longer governance", locked("gov", 14, govFor(time.Hour), "data"), false},
		{"shorter governance (the gateway's to weigh)", locked("gov", 15, govFor(time.Minute), "data"), false},
		{"delete under governance, bypassed", bypass(object("bkt", "gov", stamp(19, "w"))), false},
	}
	for _, tc := range cases {
		err := s.Commit(ctx, tc.next, nil)
		if got := errors.Is(err, meta.ErrObjectLocked); got != tc.locked || (!tc.locked && err != nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// The consent stays in the tombstone, so a repair copying it to a
	// peer that missed the delete carries it too.
	if o, err := s.ReadMeta(ctx, "bkt", "gov"); err != nil || !o.Deleted || !objectlock.Bypassed(o.Headers) {
		t.Fatalf("gov after the bypassed delete: %+v, %v", o, err)
	}
	if o, err := s.ReadMeta(ctx, "bkt", "comp"); err != nil || !objectlock.StateOf(o.Headers).Retention.Until.Equal(until.Add(time.Hour)) {
		t.Fatalf("comp after the refusals: %+v, %v", o, err)
	}
	clock.advance(3 * time.Hour)
	if err := s.Commit(ctx, object("bkt", "comp", stamp(20, "w")), nil); err != nil {
		t.Fatalf("delete after the retention ran out: %v", err)
	}
}

// A write of the same version (a repair's, or a relabel's: the same
// stamp) cannot change its lock state: every lock change is a new
// version, so such a write can only be crafted, and it would otherwise
// lift a hold or a compliance retention that deletes then get past.
func TestObjectLockSameVersion(t *testing.T) {
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newStoreAt(t, time.Hour, clock.now)
	until := clock.now().Add(time.Hour)
	comp := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until}}
	hold := objectlock.State{LegalHold: true, HoldSet: true}
	locked := func(key string, st objectlock.State) *meta.Object {
		o := inlined("bkt", key, stamp(10, "w"), []byte("data"))
		o.Distribution = []meta.PeerID{"p1"}
		o.Headers = map[string]string{}
		st.Apply(o.Headers)
		return o
	}
	for key, st := range map[string]objectlock.State{"comp": comp, "hold": hold} {
		if err := s.Commit(ctx, locked(key, st), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		key  string
		st   objectlock.State
	}{
		{"compliance removed", "comp", objectlock.State{}},
		{"compliance shortened", "comp", objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until.Add(-time.Minute)}}},
		{"hold lifted", "hold", objectlock.State{HoldSet: true}},
	} {
		if err := s.RepairCommit(ctx, locked(c.key, c.st), nil); !errors.Is(err, meta.ErrObjectLocked) {
			t.Errorf("repair, %s: %v", c.name, err)
		}
		next := locked(c.key, c.st)
		next.Distribution = []meta.PeerID{"p2"}
		if err := s.Relabel(ctx, next); err != nil {
			t.Errorf("relabel, %s: %v", c.name, err)
		}
	}
	if err := s.RepairCommit(ctx, locked("hold", hold), nil); err != nil {
		t.Fatalf("repair with the same lock: %v", err)
	}
	for key, st := range map[string]objectlock.State{"comp": comp, "hold": hold} {
		o, err := s.ReadMeta(ctx, "bkt", key)
		if err != nil {
			t.Fatal(err)
		}
		if got := objectlock.StateOf(o.Headers); got.LegalHold != st.LegalHold || !got.Retention.Until.Equal(st.Retention.Until) {
			t.Errorf("%s: lock state %+v after the refused writes, want %+v", key, got, st)
		}
		if key == "comp" && (len(o.Distribution) != 1 || o.Distribution[0] != "p2") {
			t.Errorf("comp: relabel did not take the distribution: %v", o.Distribution)
		}
	}
	for _, key := range []string{"comp", "hold"} {
		if err := s.Commit(ctx, object("bkt", key, stamp(11, "w")), nil); !errors.Is(err, meta.ErrObjectLocked) {
			t.Errorf("delete of %s after the crafted writes: %v", key, err)
		}
	}
}

// fakePlacer places every key on this peer or on none.
type fakePlacer struct {
	placed bool
	err    error
}

func (f fakePlacer) Placed(string, string, int) (bool, error) { return f.placed, f.err }

// A locked version leaves a peer by DropVersion only once the layout no
// longer places its key there (the end of a move): a drop aimed at a copy
// where it belongs, or on a peer that knows no layout yet, is refused and
// changes nothing. Unlocked versions, expired retentions and tombstones
// go wherever they are.
func TestDropVersionUnderObjectLock(t *testing.T) {
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	until := clock.now().Add(time.Hour)
	comp := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: until}}
	gov := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Governance, Until: until}}
	hold := objectlock.State{LegalHold: true, HoldSet: true}
	expired := objectlock.State{Retention: objectlock.Retention{Mode: objectlock.Compliance, Until: clock.now().Add(-time.Minute)}}
	cases := []struct {
		name    string
		st      objectlock.State
		deleted bool
		placer  Placer // nil: none set
		locked  bool
	}{
		{"compliance, no layout known", comp, false, nil, true},
		{"compliance, placed here", comp, false, fakePlacer{placed: true}, true},
		{"compliance, placement unknown", comp, false, fakePlacer{err: errors.New("no ring")}, true},
		{"compliance, moved away", comp, false, fakePlacer{}, false},
		{"governance, placed here", gov, false, fakePlacer{placed: true}, true},
		{"governance, moved away", gov, false, fakePlacer{}, false},
		{"legal hold, placed here", hold, false, fakePlacer{placed: true}, true},
		{"legal hold, moved away", hold, false, fakePlacer{}, false},
		{"expired retention, placed here", expired, false, fakePlacer{placed: true}, false},
		{"no lock, no layout known", objectlock.State{}, false, nil, false},
		{"tombstone, no layout known", objectlock.State{}, true, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStoreAt(t, time.Hour, clock.now)
			if tc.placer != nil {
				s.SetPlacer(tc.placer)
			}
			o := inlined("bkt", "k", stamp(10, "w"), []byte("data"))
			o.Headers = map[string]string{}
			tc.st.Apply(o.Headers)
			if tc.deleted {
				o = object("bkt", "k", stamp(10, "w"))
			}
			if err := s.Commit(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
			err := s.DropVersion(ctx, "bkt", "k", o.Stamp)
			if got := errors.Is(err, meta.ErrObjectLocked); got != tc.locked || (!tc.locked && err != nil) {
				t.Fatalf("drop: %v, want locked %v", err, tc.locked)
			}
			_, err = s.ReadMeta(ctx, "bkt", "k")
			if kept := err == nil; kept != tc.locked {
				t.Fatalf("after the drop: read %v, want the copy kept %v", err, tc.locked)
			}
		})
	}
}
