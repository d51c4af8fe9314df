package storage

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

// fakeClock is a settable clock for the reaper, which reads it from its
// own goroutine.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Unix(1000, 0).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time { return time.Unix(0, c.ns.Load()) }

// advance moves the clock on by d and returns the new time.
func (c *fakeClock) advance(d time.Duration) time.Time { return time.Unix(0, c.ns.Add(int64(d))) }

// newStoreAt opens a store with the given grace period and clock and
// bucket "bkt".
func newStoreAt(t *testing.T, grace time.Duration, now func() time.Time) *Store {
	t.Helper()
	s := openWith(t, t.TempDir(), Config{Logger: DefaultConfig().Logger, RetireGrace: grace, Now: now})
	mustMakeBucket(t, s, "bkt")
	return s
}

// newStoreIn opens the store in dir again with the given grace period.
func newStoreIn(t *testing.T, dir string, grace time.Duration) *Store {
	t.Helper()
	return openWith(t, dir, Config{Logger: DefaultConfig().Logger, RetireGrace: grace})
}

func openWith(t *testing.T, dir string, cfg Config) *Store {
	t.Helper()
	s, err := Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReplacedDataOutlivesCommit: whatever replaces a version with shard
// files, the old version's shards stay readable once the new one is
// settled, for the grace period, and are gone after it, leaving only what
// the new record names.
func TestReplacedDataOutlivesCommit(t *testing.T) {
	old, next := stamp(100, "a"), stamp(200, "a")
	cases := []struct {
		name     string
		replace  func(t *testing.T, s *Store) error
		wantDirs int
	}{
		{"overwrite with data", func(t *testing.T, s *Store) error {
			return put(t, s, "bkt", "k", next, payload(next))
		}, 1},
		{"overwrite inlined", func(t *testing.T, s *Store) error {
			return s.Commit(ctx, inlined("bkt", "k", next, payload(next)), nil)
		}, 0},
		{"delete", func(t *testing.T, s *Store) error {
			return s.Commit(ctx, object("bkt", "k", next), nil)
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			s := newStoreAt(t, time.Minute, clk.now)
			if err := put(t, s, "bkt", "k", old, payload(old), []byte("part two")); err != nil {
				t.Fatal(err)
			}
			if err := tc.replace(t, s); err != nil {
				t.Fatal(err)
			}
			settle(t, s, "bkt", "k", next)
			for part, want := range map[int][]byte{1: payload(old), 2: []byte("part two")} {
				if got, err := readShard(t, s, "bkt", "k", old, part); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("replaced version, part %d, right after the commit: %v (%d bytes)", part, err, len(got))
				}
			}
			s.reapDue(clk.advance(time.Minute - time.Nanosecond))
			if _, err := readShard(t, s, "bkt", "k", old, 1); err != nil {
				t.Fatalf("replaced version before its grace period ended: %v", err)
			}
			if _, ok := s.reapDue(clk.advance(time.Nanosecond)); ok || s.retiredCount() != 0 {
				t.Fatalf("%d dirs still retired after the grace period", s.retiredCount())
			}
			if _, err := readShard(t, s, "bkt", "k", old, 1); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("replaced version after its grace period: %v, want not found", err)
			}
			if d := dataDirs(t, s, "bkt", "k"); len(d) != tc.wantDirs {
				t.Fatalf("data dirs %v, want %d", d, tc.wantDirs)
			}
			if n := tmpEntries(t, s); n != 0 {
				t.Fatalf("%d entries left in staging", n)
			}
		})
	}
}

// TestReaperRuns: with a real clock the background reaper removes a
// replaced version by itself once its grace period has passed.
func TestReaperRuns(t *testing.T) {
	s := newStoreAt(t, 30*time.Millisecond, nil)
	a, b := stamp(1, "w"), stamp(2, "w")
	for _, st := range []meta.Stamp{a, b} {
		if err := put(t, s, "bkt", "k", st, payload(st)); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, s, "bkt", "k", b)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := readShard(t, s, "bkt", "k", a, 1)
		if errors.Is(err, meta.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replaced version still there after 5 s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := readShard(t, s, "bkt", "k", b, 1); err != nil || !bytes.Equal(got, payload(b)) {
		t.Fatalf("current version: %v", err)
	}
}

// TestRetireNegativeGrace: a negative grace period removes replaced data
// as soon as the new version is settled, as before retirement existed.
func TestRetireNegativeGrace(t *testing.T) {
	s := newStoreAt(t, -1, nil)
	a, b := stamp(1, "w"), stamp(2, "w")
	for _, st := range []meta.Stamp{a, b} {
		if err := put(t, s, "bkt", "k", st, payload(st)); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, s, "bkt", "k", b)
	if _, err := readShard(t, s, "bkt", "k", a, 1); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("replaced version: %v, want not found", err)
	}
	if s.retiredCount() != 0 {
		t.Fatal("something was queued")
	}
}

// TestReapSparesReinstalledDir: when a damaged record is replaced by the
// very version whose dir was retired, the commit reuses the dir, and the
// reaper must leave it to the record that names it.
func TestReapSparesReinstalledDir(t *testing.T) {
	clk := newClock()
	s := newStoreAt(t, time.Minute, clk.now)
	a, b := stamp(1, "w"), stamp(2, "w")
	for _, st := range []meta.Stamp{a, b} {
		if err := put(t, s, "bkt", "k", st, payload(st)); err != nil {
			t.Fatal(err)
		}
	}
	damage(t, s, "bkt", "k", func(n int) int { return n / 2 })
	if err := put(t, s, "bkt", "k", a, payload(a)); err != nil {
		t.Fatalf("recommit over a damaged record: %v", err)
	}
	s.reapDue(clk.advance(time.Hour))
	if got, err := readShard(t, s, "bkt", "k", a, 1); err != nil || !bytes.Equal(got, payload(a)) {
		t.Fatalf("reinstalled version after the reap: %v", err)
	}
}

// TestRetiredDirsGoneAfterRestart: the retired list is not kept, so a
// restart (a crash, or Close before the grace period ends) must find the
// leftovers and remove them.
func TestRetiredDirsGoneAfterRestart(t *testing.T) {
	s := newStoreAt(t, time.Hour, nil)
	a, b := stamp(1, "w"), stamp(2, "w")
	for _, st := range []meta.Stamp{a, b} {
		if err := put(t, s, "bkt", "k", st, payload(st)); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, s, "bkt", "k", b)
	if d := dataDirs(t, s, "bkt", "k"); len(d) != 2 {
		t.Fatalf("data dirs before restart %v, want both versions", d)
	}
	s = reopen(t, s)
	waitSweep(s)
	if d := dataDirs(t, s, "bkt", "k"); len(d) != 1 || d[0] != dataDirName(b) {
		t.Fatalf("data dirs after restart %v, want only %s", d, dataDirName(b))
	}
	if got, err := readShard(t, s, "bkt", "k", b, 1); err != nil || !bytes.Equal(got, payload(b)) {
		t.Fatalf("current version after restart: %v", err)
	}
}

// TestOpenShardSurvivesReap: a shard opened before the reap reads whole
// after it; the grace period only has to cover opens, not reads.
func TestOpenShardSurvivesReap(t *testing.T) {
	s := newStoreAt(t, time.Hour, nil)
	a, b := stamp(1, "w"), stamp(2, "w")
	if err := put(t, s, "bkt", "k", a, payload(a)); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.OpenShard(ctx, "bkt", "k", a, 1, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := put(t, s, "bkt", "k", b, payload(b)); err != nil {
		t.Fatal(err)
	}
	s.reapAll()
	if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, payload(a)) {
		t.Fatalf("open shard after the reap: %v (%d bytes)", err, len(got))
	}
}
