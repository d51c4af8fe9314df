package object

import (
	"errors"
	"testing"
	"time"
)

// check gives up a stream blocked for after only while quorum others
// still move, and one blocked for limit whatever the others do.
func TestProgressCheck(t *testing.T) {
	const after, limit = time.Second, 5 * time.Second
	base := time.Unix(1000, 0)
	idle := time.Duration(-1)
	for _, tc := range []struct {
		name    string
		blocked []time.Duration // how long each stream's write has been blocked; idle: none
		dead    []int
		quorum  int
		want    int // stream given up, -1 none
	}{
		{"one stalled, the others idle", []time.Duration{idle, idle, 2 * time.Second, idle, idle, idle}, nil, 4, 2},
		{"one stalled, the others writing briefly", []time.Duration{10 * time.Millisecond, idle, 1500 * time.Millisecond, idle, 0, idle}, nil, 4, 2},
		{"not yet after", []time.Duration{idle, idle, 900 * time.Millisecond, idle, idle, idle}, nil, 4, -1},
		{"all blocked: a slow machine, not one peer", []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}, nil, 4, -1},
		{"too few others move", []time.Duration{idle, idle, 2 * time.Second, 2 * time.Second, idle, idle}, []int{5}, 4, -1},
		{"dead streams do not count", []time.Duration{idle, idle, 2 * time.Second, idle, idle, idle}, []int{0, 1}, 4, -1},
		{"limit gives up whatever", []time.Duration{limit, limit, limit, limit, limit, limit}, nil, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProgress(len(tc.blocked), tc.quorum, after, limit)
			p.now = func() time.Time { return base }
			gave := -1
			for i, b := range tc.blocked {
				p.writer(i, nil, func(err error) {
					if !errors.Is(err, errStalled) {
						t.Errorf("stream %d given up with %v", i, err)
					}
					gave = i
				})
				if b != idle {
					p.busy[i] = base.Add(-b)
				}
			}
			for _, i := range tc.dead {
				p.gone(i)
			}
			p.check()
			if gave != tc.want {
				t.Errorf("gave up stream %d, want %d", gave, tc.want)
			}
		})
	}
}
