package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"tessera/object"
	"tessera/versioning"
)

// Store is what the worker needs of the object layer.
type Store interface {
	ListBuckets(ctx context.Context) ([]object.BucketInfo, error)
	GetBucketConfig(ctx context.Context, bucket, name string) ([]byte, error)
	ListObjects(ctx context.Context, bucket string, opts object.ListOptions) (object.ListResult, error)
	DeleteObjectWith(ctx context.Context, bucket, key string, opts object.DeleteOptions) error
	// HeadObject, PutObject and NewVersionID serve versioned buckets,
	// where an expiry writes a delete marker.
	HeadObject(ctx context.Context, bucket, key string) (object.ObjectInfo, error)
	PutObject(ctx context.Context, bucket, key string, r io.Reader, size int64, opts object.PutOptions) (object.ObjectInfo, error)
	NewVersionID() string
	ListUploads(ctx context.Context, bucket string, opts object.ListUploadsOptions) (object.ListUploadsResult, error)
	AbortMultipart(ctx context.Context, bucket, key, uploadID string, opts object.AbortOptions) error
}

// DefaultRate is how many objects a second the worker deletes or aborts
// at most, so that a rule matching millions of objects stays background
// work.
const DefaultRate = 200

// Config configures a Worker.
type Config struct {
	Store Store
	// Owns reports whether this worker applies the rules of bucket: with
	// several gateways each bucket has one owner, so nothing is done twice
	// (and the deletes are conditional, so a change of owner mid-pass
	// cannot either). Nil owns every bucket.
	Owns func(bucket string) bool
	// TagsOf reads an object's tags from its info (the gateway stores
	// them); nil: objects have none.
	TagsOf func(object.ObjectInfo) map[string]string
	// Day is the length of a lifecycle day: 24 hours unless a test
	// shortens it. Interval is the time between passes (Day/24 by
	// default, at least 200 ms, at most an hour).
	Day, Interval time.Duration
	// Rate caps deletes and aborts a second (DefaultRate when 0).
	Rate   float64
	Now    func() time.Time
	Logger zerolog.Logger
}

// Stats is what the worker has done since it started.
type Stats struct {
	Passes  uint64 `json:"passes"`
	Expired uint64 `json:"expired"`
	// Noncurrent counts versions and delete markers removed from
	// versioned buckets.
	Noncurrent uint64    `json:"noncurrent_expired"`
	Aborted    uint64    `json:"aborted"`
	Errors     uint64    `json:"errors"`
	LastPass   time.Time `json:"last_pass"`
}

// Worker applies every bucket's lifecycle rules in passes: it expires the
// objects an Expiration names and aborts the uploads an
// AbortIncompleteMultipartUpload names. A pass reads every key of the
// buckets that have rules; a crash or restart loses nothing, since the
// next pass finds what is still due.
type Worker struct {
	cfg   Config
	limit *rate.Limiter
	log   zerolog.Logger

	mu    sync.Mutex
	stats Stats

	stop context.CancelFunc
	done chan struct{}
}

// New returns a worker; Start runs it.
func New(cfg Config) *Worker {
	if cfg.Day <= 0 {
		cfg.Day = 24 * time.Hour
	}
	if cfg.Interval <= 0 {
		cfg.Interval = min(max(cfg.Day/24, 200*time.Millisecond), time.Hour)
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Owns == nil {
		cfg.Owns = func(string) bool { return true }
	}
	return &Worker{cfg: cfg, limit: rate.NewLimiter(rate.Limit(cfg.Rate), 1),
		log: cfg.Logger.With().Str("component", "lifecycle").Logger()}
}

// firstPass is the longest wait for the first pass after Start, so that
// a gateway restarted more often than Interval still applies the rules.
const firstPass = time.Minute

// Start runs a pass within a minute, then every Interval, until Close.
func (w *Worker) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTimer(min(w.cfg.Interval, firstPass))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := w.Pass(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn().Err(err).Msg("lifecycle pass cut short")
			}
			t.Reset(w.cfg.Interval)
		}
	}()
}

// Close stops the worker and waits for it; safe to call twice.
func (w *Worker) Close() {
	if w.stop != nil {
		w.stop()
		<-w.done
		w.stop = nil
	}
}

// Stats reports what the worker has done.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

func (w *Worker) count(f func(*Stats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// Pass applies the rules of every bucket this worker owns once.
func (w *Worker) Pass(ctx context.Context) error {
	buckets, err := w.cfg.Store.ListBuckets(ctx)
	if err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	var errs []error
	for _, b := range buckets {
		if !w.cfg.Owns(b.Name) {
			continue
		}
		if err := w.bucket(ctx, b.Name); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, err)
			w.count(func(s *Stats) { s.Errors++ })
		}
	}
	w.count(func(s *Stats) { s.Passes++; s.LastPass = w.cfg.Now() })
	return errors.Join(errs...)
}

// bucket applies one bucket's rules, if it has any.
func (w *Worker) bucket(ctx context.Context, bucket string) error {
	data, err := w.cfg.Store.GetBucketConfig(ctx, bucket, ConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) || errors.Is(err, object.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lifecycle %s: %w", bucket, err)
	}
	c, err := Parse(data)
	if err != nil {
		return fmt.Errorf("lifecycle %s: stored configuration: %w", bucket, err)
	}
	st, err := w.versioning(ctx, bucket)
	if err != nil {
		return err
	}
	if st != versioning.Unversioned {
		// The stored objects are versions: expiry writes delete markers
		// and removes noncurrent versions (versions.go).
		if err := w.expireVersions(ctx, bucket, c, st); err != nil {
			return err
		}
		return w.abort(ctx, bucket, c)
	}
	if err := w.expire(ctx, bucket, c); err != nil {
		return err
	}
	return w.abort(ctx, bucket, c)
}

// expire deletes the bucket's objects an Expiration names.
func (w *Worker) expire(ctx context.Context, bucket string, c *Configuration) error {
	if !c.has(func(r *Rule) bool { return r.Expiration != nil }) {
		return nil
	}
	for after := ""; ; {
		page, err := w.cfg.Store.ListObjects(ctx, bucket, object.ListOptions{After: after, MaxKeys: object.DefaultMaxKeys})
		if err != nil {
			return fmt.Errorf("lifecycle %s: %w", bucket, err)
		}
		for _, o := range page.Objects {
			if !c.mayExpire(o, w.clock()) {
				continue
			}
			if err := w.expireOne(ctx, bucket, c, o.Key); err != nil {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		after = page.NextAfter
	}
}

// mayExpire reports whether a listed object may be due: a rule expires it
// as far as the listing tells (tags aside, which it does not carry; they
// are checked on the current version before the delete).
func (c *Configuration) mayExpire(info object.ObjectInfo, clk Clock) bool {
	o := Object{Key: info.Key, Size: info.Size, ModTime: info.ModTime}
	for i := range c.Rules {
		if c.Rules[i].expires(o, clk, false) {
			return true
		}
	}
	return false
}

// errNotDue makes DeleteObjectWith keep an object no rule expires any more
// (rewritten or retagged since it was listed).
var errNotDue = errors.New("no longer due")

// expireOne deletes key if a rule expires its current version, checked on
// that version as the delete reads it.
func (w *Worker) expireOne(ctx context.Context, bucket string, c *Configuration, key string) error {
	if err := w.limit.Wait(ctx); err != nil {
		return err
	}
	err := w.cfg.Store.DeleteObjectWith(ctx, bucket, key, object.DeleteOptions{Check: func(info *object.ObjectInfo) error {
		if info == nil {
			return errNotDue // gone already
		}
		o := Object{Key: info.Key, Size: info.Size, ModTime: info.ModTime}
		if w.cfg.TagsOf != nil {
			o.Tags = w.cfg.TagsOf(*info)
		}
		for i := range c.Rules {
			if c.Rules[i].Expires(o, w.clock()) {
				return nil
			}
		}
		return errNotDue
	}})
	switch {
	case errors.Is(err, errNotDue):
		return nil
	case err != nil:
		w.count(func(s *Stats) { s.Errors++ })
		w.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).Msg("expiring object failed; the next pass retries")
		return nil
	}
	w.count(func(s *Stats) { s.Expired++ })
	w.log.Debug().Str("bucket", bucket).Str("key", key).Msg("object expired")
	return nil
}

// abort aborts the bucket's uploads an AbortIncompleteMultipartUpload
// names.
func (w *Worker) abort(ctx context.Context, bucket string, c *Configuration) error {
	if !c.has(func(r *Rule) bool { return r.AbortIncompleteMultipartUpload != nil }) {
		return nil
	}
	opts := object.ListUploadsOptions{MaxUploads: 1000}
	for {
		page, err := w.cfg.Store.ListUploads(ctx, bucket, opts)
		if err != nil {
			return fmt.Errorf("lifecycle %s: uploads: %w", bucket, err)
		}
		for _, u := range page.Uploads {
			if !c.aborts(u, w.clock()) {
				continue
			}
			if err := w.limit.Wait(ctx); err != nil {
				return err
			}
			err := w.cfg.Store.AbortMultipart(ctx, bucket, u.Key, u.UploadID, object.AbortOptions{IfInitiated: u.Initiated})
			switch {
			case errors.Is(err, object.ErrUploadNotFound):
			case err != nil:
				w.count(func(s *Stats) { s.Errors++ })
				w.log.Warn().Err(err).Str("bucket", bucket).Str("key", u.Key).Msg("aborting upload failed; the next pass retries")
			default:
				w.count(func(s *Stats) { s.Aborted++ })
			}
		}
		if !page.IsTruncated {
			return nil
		}
		opts.KeyMarker, opts.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
}

func (c *Configuration) aborts(u object.UploadInfo, clk Clock) bool {
	for i := range c.Rules {
		if c.Rules[i].Aborts(u.Key, u.Initiated, clk) {
			return true
		}
	}
	return false
}

func (c *Configuration) has(f func(*Rule) bool) bool {
	for i := range c.Rules {
		if c.Rules[i].Status == "Enabled" && f(&c.Rules[i]) {
			return true
		}
	}
	return false
}

func (w *Worker) clock() Clock { return Clock{Now: w.cfg.Now(), Day: w.cfg.Day} }

// versioning is the bucket's versioning setting.
func (w *Worker) versioning(ctx context.Context, bucket string) (versioning.Status, error) {
	data, err := w.cfg.Store.GetBucketConfig(ctx, bucket, versioning.ConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return versioning.Unversioned, nil
	}
	if err != nil {
		return "", fmt.Errorf("lifecycle %s: versioning: %w", bucket, err)
	}
	cfg, err := versioning.Parse(data)
	if err != nil {
		return "", fmt.Errorf("lifecycle %s: stored versioning: %w", bucket, err)
	}
	return cfg.Status, nil
}
