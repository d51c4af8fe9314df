package sched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"tessera/meta"
)

// clock is a manually advanced time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_700_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestTracker(c *clock) *Tracker {
	return NewTracker(TrackerConfig{Alpha: 0.5, PriorThroughput: 100, FailHold: 10 * time.Second, Now: c.Now})
}

func TestTrackerInFlight(t *testing.T) {
	tr := newTestTracker(newClock())
	d1 := tr.Begin("p", 100)
	d2 := tr.Begin("p", 50)
	if got := tr.Stat("p").InFlight; got != 150 {
		t.Fatalf("in flight = %d, want 150", got)
	}
	d1(nil, 100, time.Second)
	d1(nil, 100, time.Second) // ignored
	if got := tr.Stat("p").InFlight; got != 50 {
		t.Fatalf("in flight after one done = %d, want 50", got)
	}
	d2(errors.New("boom"), 0, time.Second)
	if got := tr.Stat("p").InFlight; got != 0 {
		t.Fatalf("in flight after all done = %d, want 0", got)
	}
	if got := tr.Stat("unknown"); got != (PeerStat{}) {
		t.Fatalf("unknown peer stat = %+v", got)
	}
	if len(tr.Stats()) != 1 {
		t.Fatalf("Stats = %v", tr.Stats())
	}
}

func TestTrackerThroughputEWMA(t *testing.T) {
	tr := newTestTracker(newClock())
	steps := []struct {
		n    int64
		dur  time.Duration
		want float64
	}{
		{1000, time.Second, 1000},     // first sample is taken as is
		{3000, time.Second, 2000},     // alpha 0.5
		{0, time.Second, 2000},        // nothing transferred: no sample
		{500, 0, 2000},                // no duration: no sample
		{1000, 2 * time.Second, 1250}, // 500 B/s
	}
	for i, s := range steps {
		tr.Begin("p", s.n)(nil, s.n, s.dur)
		if got := tr.Stat("p").Throughput; math.Abs(got-s.want) > 1e-9 {
			t.Fatalf("step %d: throughput = %v, want %v", i, got, s.want)
		}
	}
}

func TestTrackerOutcomes(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		wantFailed bool
	}{
		{"success", nil, false},
		{"transport error", errors.New("connection reset"), true},
		{"wrapped error", fmt.Errorf("read shard 3: %w", errors.New("eof")), true},
		{"canceled", fmt.Errorf("hedge: %w", context.Canceled), false},
		{"missing shard", fmt.Errorf("read: %w", meta.ErrNotFound), false},
		{"deadline", context.DeadlineExceeded, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(newClock())
			tr.Begin("p", 10)(tc.err, 0, time.Millisecond)
			if got := !tr.Stat("p").LastFail.IsZero(); got != tc.wantFailed {
				t.Fatalf("failed = %v, want %v", got, tc.wantFailed)
			}
		})
	}
}

func TestTrackerFailureHoldAndRecovery(t *testing.T) {
	c := newClock()
	tr := newTestTracker(c)
	tr.Begin("p", 1)(errors.New("down"), 0, 0)
	if v := tr.views([]meta.PeerID{"p"}); !v[0].failed {
		t.Fatal("not failed right after failure")
	}
	c.Advance(9 * time.Second)
	if v := tr.views([]meta.PeerID{"p"}); !v[0].failed {
		t.Fatal("failure expired before FailHold")
	}
	c.Advance(2 * time.Second)
	if v := tr.views([]meta.PeerID{"p"}); v[0].failed {
		t.Fatal("failure outlived FailHold")
	}
	tr.Begin("p", 1)(errors.New("down again"), 0, 0)
	tr.Begin("p", 1)(nil, 1, time.Millisecond)
	if v := tr.views([]meta.PeerID{"p"}); v[0].failed {
		t.Fatal("success did not clear the failure")
	}
}

func TestTrackerDefaults(t *testing.T) {
	tr := NewTracker(TrackerConfig{Alpha: 7})
	def := DefaultTrackerConfig()
	if tr.cfg.Alpha != def.Alpha || tr.cfg.PriorThroughput != def.PriorThroughput ||
		tr.cfg.FailHold != def.FailHold || tr.cfg.Now == nil {
		t.Fatalf("defaults not applied: %+v", tr.cfg)
	}
	v := tr.views([]meta.PeerID{"never-seen", ""})
	if v[0].throughput != def.PriorThroughput || v[0].failed {
		t.Fatalf("unknown peer view = %+v", v[0])
	}
	if !v[1].failed {
		t.Fatal("a shard without holder must rank as failed")
	}
}
