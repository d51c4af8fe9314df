package object

import (
	"testing"
	"time"
)

func TestHLC(t *testing.T) {
	// step: set the wall clock, observe a peer's stamp (0: none), then
	// read the clock.
	type step struct {
		wall, observe, want int64
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"follows a running wall clock", []step{{100, 0, 100}, {250, 0, 250}}},
		{"stuck wall clock ticks logically", []step{{100, 0, 100}, {100, 0, 101}, {100, 0, 102}}},
		{"wall clock stepping back", []step{{100, 0, 100}, {40, 0, 101}}},
		{"observed stamp ahead", []step{{100, 0, 100}, {110, 500, 501}, {120, 0, 502}}},
		{"observed stamp behind", []step{{100, 0, 100}, {110, 50, 110}}},
		{"observed equal to the last reading", []step{{100, 0, 100}, {100, 100, 101}}},
		{"wall clock catches up past an observation", []step{{100, 500, 501}, {900, 0, 900}}},
		{"largest of several observations", []step{{10, 300, 301}, {10, 200, 302}, {10, 400, 401}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var wall int64
			c := newHLC(func() time.Time { return time.Unix(0, wall) })
			for i, s := range tc.steps {
				wall = s.wall
				if s.observe != 0 {
					c.observe(s.observe)
				}
				if got := c.now(); got != s.want {
					t.Fatalf("step %d (wall %d, observe %d): now = %d, want %d", i, s.wall, s.observe, got, s.want)
				}
			}
		})
	}
}
