package object

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"tessera/meta"
)

// RepairQueueConfig tunes a RepairQueue. Zero fields take the defaults.
type RepairQueueConfig struct {
	// Workers repair objects concurrently (2); the scanner checks as many
	// keys at once, within ScanRate.
	Workers int
	// MinBackoff and MaxBackoff bound the wait before an object whose
	// repair failed is retried; it doubles per failure (1 s, 1 min).
	MinBackoff, MaxBackoff time.Duration
	// MaxPending caps the objects held (10000); reports beyond it are
	// dropped and left to the scanner.
	MaxPending int
	// Timeout bounds one object's repair (2 min).
	Timeout time.Duration
	// ScanInterval is the pause between two scanner passes over every
	// object; 0 disables the scanner.
	ScanInterval time.Duration
	// ScanRate caps the objects the scanner checks per second (50).
	ScanRate float64
	// The scanner checks records, not shard contents. Verifying shard
	// bytes is the peers' deep scrub (package scrub): a gateway-side
	// scrub would pull every shard over the network, once per gateway,
	// while a peer reads only its own disk. Its findings come back here
	// through Enqueue, as Suspect shards, like a failed read's.
	//
	// TombstoneGrace is how old a tombstone must be before the collector
	// removes it from every peer (CollectTombstone); 0 means
	// DefaultTombstoneGrace, negative keeps tombstones for good. The
	// collector runs beside the scanner (collector.go), and not when the
	// scanner is disabled.
	TombstoneGrace time.Duration
	// CollectRate caps the tombstones the collector removes per second
	// (DefaultCollectRate).
	CollectRate float64
	Logger      zerolog.Logger
}

func (c *RepairQueueConfig) fill() {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(time.Minute, c.MinBackoff)
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 10000
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.ScanRate <= 0 {
		c.ScanRate = 50
	}
	if c.TombstoneGrace == 0 {
		c.TombstoneGrace = DefaultTombstoneGrace
	}
	if c.CollectRate <= 0 {
		c.CollectRate = DefaultCollectRate
	}
}

// DefaultCollectRate is RepairQueueConfig.CollectRate: a million
// tombstones in under an hour, each costing a read and a removal on
// every peer that may hold the key.
const DefaultCollectRate = 300

// RepairStats is a RepairQueue's progress.
type RepairStats struct {
	Pending    int    // objects known to lack a shard, waiting or in repair
	Repaired   uint64 // objects whose repair rewrote at least one shard
	Failed     uint64 // repair attempts that failed (and were rescheduled)
	Dropped    uint64 // reports dropped because the queue was full
	ScanPasses uint64 // scanner passes completed
	Collected  uint64 // tombstones the collector removed from every peer
}

// RepairQueue repairs degraded objects in the background. It is fed by
// the Layer's Config.Repair hook (degraded writes and reads), by the
// peers' scrub findings (Enqueue) and by its own scanner, which walks
// every key at a bounded rate, deleted keys included: a tombstone is
// repaired like an object. Its collector removes a tombstone once it is
// on every peer and older than TombstoneGrace (collector.go). Each object
// is held once; a failed repair is retried with exponential backoff, per
// object, never by restarting a pass. The queue is in memory: after a restart the scanner finds what
// was lost, because the peers' listings it walks hold every record,
// tombstones too. Safe for concurrent use.
type RepairQueue struct {
	cfg RepairQueueConfig
	log zerolog.Logger

	mu      sync.Mutex
	items   map[string]*repairEntry
	wake    chan struct{}
	stats   RepairStats
	started bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type repairEntry struct {
	item     RepairItem
	attempts int
	next     time.Time
	running  bool
	again    bool // a report for another version arrived while running
}

// NewRepairQueue returns a queue that holds reports until Start.
func NewRepairQueue(cfg RepairQueueConfig) *RepairQueue {
	cfg.fill()
	return &RepairQueue{
		cfg:   cfg,
		log:   cfg.Logger.With().Str("component", "repair").Logger(),
		items: map[string]*repairEntry{},
		wake:  make(chan struct{}, 1),
	}
}

func itemKey(bucket, key string) string { return bucket + "\x00" + key }

// Enqueue records a degraded object. It never blocks; it has the
// signature of Config.Repair.
func (q *RepairQueue) Enqueue(it RepairItem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := itemKey(it.Bucket, it.Key)
	if e, ok := q.items[k]; ok {
		if e.running {
			// The repair in progress reads the current version anew; only a
			// report about another version may need one more pass.
			e.again = e.again || e.item.Stamp != it.Stamp
			return
		}
		if e.item.Stamp == it.Stamp {
			e.item.Shards = mergeShards(e.item.Shards, it.Shards)
		} else {
			e.item = it
		}
		return
	}
	if len(q.items) >= q.cfg.MaxPending {
		q.stats.Dropped++
		return
	}
	q.items[k] = &repairEntry{item: it, next: time.Now()}
	q.signal()
}

func mergeShards(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

func (q *RepairQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Kick makes every waiting object due now, e.g. when a peer came back.
func (q *RepairQueue) Kick() {
	q.mu.Lock()
	now := time.Now()
	for _, e := range q.items {
		e.next = now
	}
	q.mu.Unlock()
	q.signal()
}

// Pending is the number of objects known to lack a shard.
func (q *RepairQueue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Stats returns the queue's counters.
func (q *RepairQueue) Stats() RepairStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.Pending = len(q.items)
	return s
}

// Start runs the workers and the scanner against l until Close. It may be
// called once.
func (q *RepairQueue) Start(l *Layer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return
	}
	q.started = true
	ctx, cancel := context.WithCancel(context.Background())
	q.cancel = cancel
	for range q.cfg.Workers {
		q.wg.Go(func() { q.work(ctx, l) })
	}
	if q.cfg.ScanInterval > 0 {
		q.wg.Go(func() { q.scan(ctx, l) })
		if q.cfg.TombstoneGrace > 0 {
			q.wg.Go(func() { q.collect(ctx, l) })
		}
	}
}

// Close stops the workers and the scanner and waits for them.
func (q *RepairQueue) Close() {
	q.mu.Lock()
	cancel := q.cancel
	q.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	q.wg.Wait()
}

// work repairs due objects until ctx ends.
func (q *RepairQueue) work(ctx context.Context, l *Layer) {
	for {
		e, wait := q.take()
		if e == nil {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-q.wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		q.signal() // another worker may take the next due one
		err := q.repairOne(ctx, l, e.item)
		if ctx.Err() != nil {
			q.finish(e, ctx.Err())
			return
		}
		q.finish(e, err)
	}
}

// take claims the due entry that has waited longest, or says how long to
// wait for the next one.
func (q *RepairQueue) take() (*repairEntry, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	var best *repairEntry
	wait := time.Minute
	for _, e := range q.items {
		if e.running {
			continue
		}
		if d := e.next.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		if best == nil || e.next.Before(best.next) {
			best = e
		}
	}
	if best != nil {
		best.running = true
	}
	return best, wait
}

func (q *RepairQueue) repairOne(ctx context.Context, l *Layer, it RepairItem) error {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	res, err := l.RepairObject(ctx, it.Bucket, it.Key, RepairOptions{Stamp: it.Stamp, Suspect: it.Shards})
	if len(res.Repaired) > 0 {
		q.mu.Lock()
		q.stats.Repaired++
		q.mu.Unlock()
	}
	return err
}

// finish drops a repaired entry or reschedules a failed one.
func (q *RepairQueue) finish(e *repairEntry, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e.running = false
	k := itemKey(e.item.Bucket, e.item.Key)
	gone := errors.Is(err, ErrObjectNotFound) || errors.Is(err, ErrBucketNotFound)
	switch {
	case err == nil && e.again:
		e.again, e.attempts, e.next = false, 0, time.Now()
	case err == nil || gone:
		delete(q.items, k)
	default:
		q.stats.Failed++
		e.attempts++
		backoff := q.cfg.MinBackoff << min(e.attempts-1, 16)
		e.next = time.Now().Add(min(backoff, q.cfg.MaxBackoff))
		q.log.Debug().Str("bucket", e.item.Bucket).Str("key", e.item.Key).Int("attempts", e.attempts).
			Err(err).Msg("repair failed; will retry")
	}
}

// scan walks every object of every bucket at ScanRate, repairing what it
// finds degraded and queueing what it cannot repair now.
func (q *RepairQueue) scan(ctx context.Context, l *Layer) {
	interval := time.Duration(float64(time.Second) / q.cfg.ScanRate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	if !sleepCtx(ctx, min(q.cfg.ScanInterval, firstPassDelay)) {
		return
	}
	for {
		if err := q.scanPass(ctx, l, tick.C); err != nil {
			if ctx.Err() != nil {
				return
			}
			q.log.Warn().Err(err).Msg("scan pass cut short")
		} else {
			q.mu.Lock()
			q.stats.ScanPasses++
			q.mu.Unlock()
		}
		if !sleepCtx(ctx, q.cfg.ScanInterval) {
			return
		}
	}
}

// firstPassDelay is the longest the scanner and the collector wait before
// their first pass: a gateway starts before it has heard of its peers (the
// embedded server starts its peers after its gateway), and a pass then
// would only fail for want of a quorum.
const firstPassDelay = 10 * time.Second

// sleepCtx waits d, reporting false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (q *RepairQueue) scanPass(ctx context.Context, l *Layer, tick <-chan time.Time) error {
	if err := l.SyncBuckets(ctx); err != nil {
		q.log.Debug().Err(err).Msg("buckets not on every peer yet")
	}
	buckets, err := l.ListBuckets(ctx)
	if err != nil {
		return err
	}
	// Up to Workers keys are checked at once, so that the peers' latency,
	// not only ScanRate, does not bound how fast a pass goes.
	slots := make(chan struct{}, q.cfg.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, b := range buckets {
		after := ""
		for {
			page, more, err := l.listKeys(ctx, b.Name, after, DefaultMaxKeys)
			if err != nil {
				return err
			}
			for _, e := range page {
				if err := waitTurn(ctx, tick, slots); err != nil {
					return err
				}
				wg.Go(func() {
					defer func() { <-slots }()
					q.scanOne(ctx, l, b.Name, e)
				})
			}
			if !more || len(page) == 0 {
				break
			}
			after = page[len(page)-1].Key
		}
	}
	return nil
}

// scanOne repairs one key the scanner listed, a tombstone like an
// object: a tombstone the collector cannot remove yet because a copy is
// missing becomes removable once this puts it on every peer.
func (q *RepairQueue) scanOne(ctx context.Context, l *Layer, bucket string, e meta.Entry) {
	key := e.Key
	if q.queued(bucket, key) {
		return // the workers own it
	}
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	res, err := l.RepairObject(ctx, bucket, key, RepairOptions{})
	q.mu.Lock()
	if len(res.Repaired) > 0 {
		q.stats.Repaired++
	}
	q.mu.Unlock()
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrObjectNotFound) {
		q.Enqueue(RepairItem{Bucket: bucket, Key: key, Stamp: res.Stamp, Reason: "scan: " + err.Error()})
	}
}

func (q *RepairQueue) queued(bucket, key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.items[itemKey(bucket, key)]
	return ok
}
