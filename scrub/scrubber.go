package scrub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"tessera/erasure"
	"tessera/meta"
)

// Store is what the scrubber reads: a peer's storage.Store.
type Store interface {
	ListBuckets(ctx context.Context) ([]meta.Bucket, error)
	// ListRecords lists every record, damaged ones as their key alone.
	ListRecords(ctx context.Context, bucket, after string, limit int) ([]meta.Entry, error)
	ReadMeta(ctx context.Context, bucket, key string) (*meta.Object, error)
	OpenShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, int64, error)
	StatRecord(ctx context.Context, bucket, key string) (fs.FileInfo, error)
}

// errRestart ends a pass because Start asked for a new one.
var errRestart = errors.New("scrub: pass restarted")

// Scrubber verifies one store in the background. Run drives it; Start
// and Report are safe to call from any goroutine.
type Scrubber struct {
	store Store
	cfg   Config
	log   zerolog.Logger
	pace  *pacer
	// trigger carries Start's request to Run.
	trigger chan struct{}

	mu       sync.Mutex
	st       state
	findings map[string]*finding
	rotate   int       // where the next Report's window of findings starts
	dirty    bool      // st or findings changed since the last save
	savedAt  time.Time // last save

	coders map[codeKey]*erasure.Coder // Run's goroutine only
}

type codeKey struct{ k, m, block int }

// New returns a scrubber of store, resuming the state saved in cfg.Dir.
func New(store Store, cfg Config) (*Scrubber, error) {
	cfg.fill()
	s := &Scrubber{
		store:    store,
		cfg:      cfg,
		log:      cfg.Logger.With().Str("component", "scrub").Logger(),
		pace:     newPacer(cfg),
		trigger:  make(chan struct{}, 1),
		findings: map[string]*finding{},
		coders:   map[codeKey]*erasure.Coder{},
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Start asks for a pass now: a pass in progress starts over, and the new
// one runs unpaced (at the rate caps). It returns the peer's time of the
// request; the pass it starts begins at or after it.
func (s *Scrubber) Start() time.Time {
	at := s.cfg.now()
	select {
	case s.trigger <- struct{}{}:
	default: // one is already asked for
	}
	return at
}

// Report returns the scrubber's status with up to limit findings.
func (s *Scrubber) Report(limit int) Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Now: s.cfg.now(), NextPass: s.st.Next, Interval: s.cfg.Interval.Seconds(),
		BytesPerSec: s.cfg.BytesPerSec, ObjectsPerSec: s.cfg.ObjectsPerSec, Totals: s.st.Totals,
		Pending: len(s.findings), Findings: s.window(limit)}
	if s.st.Pass != nil {
		p := s.st.Pass.PassStats
		r.Pass, r.NextPass = &p, time.Time{}
	}
	if s.st.Last != nil {
		l := *s.st.Last
		r.Last = &l
	}
	return r
}

// Run scrubs until ctx ends, then saves the state.
func (s *Scrubber) Run(ctx context.Context) {
	tick := time.NewTicker(recheckEvery)
	defer tick.Stop()
	defer s.save(true)
	for ctx.Err() == nil {
		if !s.inPass() && !s.idle(ctx, tick.C) {
			return
		}
		err := s.pass(ctx, tick.C)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errRestart):
			s.begin(true)
		case err != nil:
			// The pass stays where it was and resumes after a pause.
			s.log.Warn().Err(err).Msg("scrub pass interrupted; resuming shortly")
			if s.wait(ctx, time.Minute) != nil {
				return
			}
		}
	}
}

func (s *Scrubber) inPass() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Pass != nil
}

// idle waits for the next pass, looking after findings meanwhile; it
// begins the pass and reports false when ctx ended first.
func (s *Scrubber) idle(ctx context.Context, tick <-chan time.Time) bool {
	for {
		s.mu.Lock()
		next := s.st.Next
		s.mu.Unlock()
		d := next.Sub(s.cfg.now())
		if d <= 0 {
			s.begin(false)
			return true
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-s.trigger:
			t.Stop()
			s.begin(true)
			return true
		case <-tick:
			t.Stop()
			s.recheck(ctx)
			s.save(false)
		case <-t.C:
		}
	}
}

// wait sleeps d or until ctx ends.
func (s *Scrubber) wait(ctx context.Context, d time.Duration) error {
	if s.cfg.sleep != nil {
		return s.cfg.sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

// pause is a pacing wait between objects: Start ends it with errRestart,
// and findings are looked after while it lasts.
func (s *Scrubber) pause(ctx context.Context, d time.Duration, tick <-chan time.Time) error {
	if s.cfg.sleep != nil {
		return s.cfg.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.trigger:
			return errRestart
		case <-tick:
			s.recheck(ctx)
			s.save(false)
		case <-t.C:
			return nil
		}
	}
}

// between runs between two objects: a Start ends the pass, a due tick
// looks after findings.
func (s *Scrubber) between(ctx context.Context, tick <-chan time.Time) error {
	select {
	case <-s.trigger:
		return errRestart
	case <-tick:
		s.recheck(ctx)
	default:
	}
	s.save(false)
	return ctx.Err()
}

func (s *Scrubber) coder(o *meta.Object) (*erasure.Coder, error) {
	k := codeKey{o.Code.K, o.Code.M, o.BlockSize}
	if c := s.coders[k]; c != nil {
		return c, nil
	}
	c, err := erasure.New(o.Code.K, o.Code.M, o.BlockSize)
	if err != nil {
		return nil, fmt.Errorf("%w: record code %s block %d: %w", meta.ErrCorrupt, o.Code, o.BlockSize, err)
	}
	s.coders[k] = c
	return c, nil
}
