package scrub

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of Config (and of --scrub-interval and --scrub-rate).
const (
	// DefaultInterval: a full pass every week, as Ceph deep-scrubs.
	DefaultInterval = 7 * 24 * time.Hour
	// DefaultBytesPerSec caps the shard bytes a peer reads per second
	// for scrubbing: a small share of one disk's sequential bandwidth.
	DefaultBytesPerSec = 32 << 20
	// DefaultObjectsPerSec caps the objects checked per second, which
	// bounds the file opens a store of tiny objects costs.
	DefaultObjectsPerSec = 200
)

const (
	// budgetShare of the interval is what a scheduled pass is paced to
	// fill, leaving slack for load and restarts.
	budgetShare = 0.9
	// unitBytes is what one object counts for in pacing besides its
	// size, for the opens and the record read it costs.
	unitBytes = 64 << 10
	// recheckEvery is how often findings are looked at for repairs.
	recheckEvery = 2 * time.Second
	// recheckAfter is how long a finding whose record did not change
	// waits before it is verified again.
	recheckAfter = time.Hour
	// maxFindings bounds the findings held; more damage than this is
	// found again by the next pass once these are repaired.
	maxFindings = 10000
	// saveEvery bounds how often the state file is rewritten mid-pass.
	saveEvery = 10 * time.Second
	// burstBytes is the byte limiter's bucket depth and the most one read
	// asks of it.
	burstBytes = 256 << 10
	listPage   = 1000
	stateFile  = "scrub.state"
)

// Config tunes a Scrubber. Zero fields take the defaults.
type Config struct {
	// Dir keeps the state file (scrub.state); "" keeps state in memory.
	Dir string
	// Interval is the time from the start of one scheduled pass to the
	// start of the next (DefaultInterval).
	Interval time.Duration
	// BytesPerSec and ObjectsPerSec cap every pass's reads.
	BytesPerSec   float64
	ObjectsPerSec float64
	Logger        zerolog.Logger

	// now and sleep are the clock, replaced in tests.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

func (c *Config) fill() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.BytesPerSec <= 0 {
		c.BytesPerSec = DefaultBytesPerSec
	}
	if c.ObjectsPerSec <= 0 {
		c.ObjectsPerSec = DefaultObjectsPerSec
	}
	if c.now == nil {
		c.now = time.Now
	}
}
