package object

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// MigratorConfig tunes a Migrator. Zero fields take the defaults.
type MigratorConfig struct {
	// Workers move objects concurrently (2).
	Workers int
	// Retry is the pause before a pass that left objects unmoved runs
	// again (5 s).
	Retry  time.Duration
	Logger zerolog.Logger
	// Active, when set, is asked before each pass; a false answer skips
	// it (another gateway does the moving).
	Active func() bool
	// Settled, when set, hears each new MigrationStats.Done: the cluster
	// may then stop looking for data on layouts older than that epoch.
	Settled func(epoch uint64)
	// Unfinished, when set, is asked after passes that settled: true (a
	// peer being drained still reports objects) keeps passes going every
	// Retry, since nothing else would trigger the one that clears it.
	Unfinished func() bool
}

// MigrationStats is a Migrator's progress.
type MigrationStats struct {
	// Target is the epoch data is being moved to; Done the last epoch
	// whose pass finished with every object in place.
	Target, Done uint64
	Running      bool
	Passes       uint64
	Objects      uint64 // objects moved, all passes
	Bytes        int64  // shard bytes written to new peers, all passes
	Failed       uint64 // object moves that failed (retried next pass)
}

// Migrator moves objects to the current ring's placement after an epoch
// change: a pass walks every object and calls MigrateObject, which moves
// only the shards whose peer left the placement. A pass that could not
// move everything runs again after Retry. Safe for concurrent use.
type Migrator struct {
	l   *Layer
	cfg MigratorConfig
	log zerolog.Logger

	mu      sync.Mutex
	stats   MigrationStats
	trigger chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewMigrator starts a Migrator over l; it idles until Trigger.
func NewMigrator(l *Layer, cfg MigratorConfig) *Migrator {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Migrator{l: l, cfg: cfg, log: cfg.Logger.With().Str("component", "migrate").Logger(),
		trigger: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go m.run(ctx)
	return m
}

// Trigger asks for a pass towards epoch (again, if one is running).
func (m *Migrator) Trigger(epoch uint64) {
	m.mu.Lock()
	m.stats.Target = max(m.stats.Target, epoch)
	m.mu.Unlock()
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

// Stats returns the progress so far.
func (m *Migrator) Stats() MigrationStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Close stops the migrator and waits for it; an interrupted pass resumes
// from scratch on the next start (each move is idempotent).
func (m *Migrator) Close() {
	m.cancel()
	<-m.done
}

func (m *Migrator) run(ctx context.Context) {
	defer close(m.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.trigger:
		}
		for {
			m.mu.Lock()
			target := m.stats.Target
			m.mu.Unlock()
			if m.cfg.Active != nil && !m.cfg.Active() {
				break
			}
			// Two clean passes: the second catches writes that straddled
			// the epoch change and landed on the old placement after the
			// first pass had listed past them.
			if clean := m.pass(ctx); clean && m.pass(ctx) {
				m.settle(target)
				if m.cfg.Unfinished == nil || !m.cfg.Unfinished() {
					break
				}
			}
			t := time.NewTimer(m.cfg.Retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// settle records that every object sits on epoch target's placement or
// a newer one.
func (m *Migrator) settle(target uint64) {
	m.mu.Lock()
	m.stats.Done = max(m.stats.Done, target)
	m.mu.Unlock()
	if m.cfg.Settled != nil {
		m.cfg.Settled(target)
	}
}

// pass moves every object once and reports whether all are in place.
func (m *Migrator) pass(ctx context.Context) bool {
	m.setRunning(true)
	defer m.setRunning(false)
	keys := make(chan [2]string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	clean := true
	var unmoved uint64
	var firstErr error
	for range m.cfg.Workers {
		wg.Go(func() {
			for k := range keys {
				res, err := m.l.MigrateObject(ctx, k[0], k[1])
				m.mu.Lock()
				if len(res.Moved) > 0 && err == nil {
					m.stats.Objects++
				}
				m.stats.Bytes += res.Bytes
				if err != nil {
					m.stats.Failed++
				}
				m.mu.Unlock()
				if err != nil && ctx.Err() == nil {
					m.log.Debug().Err(err).Str("bucket", k[0]).Str("key", k[1]).Msg("object not moved yet")
					mu.Lock()
					clean = false
					unmoved++
					if firstErr == nil {
						firstErr = fmt.Errorf("%s/%s: %w", k[0], k[1], err)
					}
					mu.Unlock()
				}
			}
		})
	}
	err := m.walk(ctx, keys)
	close(keys)
	wg.Wait()
	m.mu.Lock()
	m.stats.Passes++
	m.mu.Unlock()
	if err != nil {
		m.log.Warn().Err(err).Msg("migration pass cut short")
		return false
	}
	if !clean {
		// One line a pass, so a move that keeps failing says why at the
		// default level without a line per object.
		m.log.Info().Uint64("unmoved", unmoved).AnErr("first", firstErr).Dur("retry_in", m.cfg.Retry).
			Msg("migration pass left objects unmoved")
	}
	return clean
}

func (m *Migrator) walk(ctx context.Context, keys chan<- [2]string) error {
	if err := m.l.SyncBuckets(ctx); err != nil {
		// A peer that is down gets its buckets on a later pass; the
		// moves to it fail until then and are retried.
		m.log.Debug().Err(err).Msg("buckets not on every peer yet")
	}
	buckets, err := m.l.ListBuckets(ctx)
	if err != nil {
		return err
	}
	for _, b := range buckets {
		after := ""
		for {
			page, err := m.l.ListObjects(ctx, b.Name, ListOptions{After: after, MaxKeys: DefaultMaxKeys})
			if err != nil {
				return err
			}
			for _, o := range page.Objects {
				select {
				case keys <- [2]string{b.Name, o.Key}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if !page.IsTruncated {
				break
			}
			after = page.NextAfter
		}
	}
	return nil
}

func (m *Migrator) setRunning(on bool) {
	m.mu.Lock()
	m.stats.Running = on
	m.mu.Unlock()
}
