package scrub

import (
	"context"
	"fmt"
	"io"
	"time"

	"golang.org/x/time/rate"
)

// pacer holds a pass below its byte and object rates. It reserves at the
// scrubber's clock and sleeps through it, so tests can run it on a fake
// clock.
type pacer struct {
	b, o  *rate.Limiter
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

func newPacer(cfg Config) *pacer {
	p := &pacer{
		b:   rate.NewLimiter(rate.Limit(cfg.BytesPerSec), burstBytes),
		o:   rate.NewLimiter(rate.Limit(cfg.ObjectsPerSec), 1),
		now: cfg.now, sleep: cfg.sleep,
	}
	if p.sleep == nil {
		p.sleep = sleepCtx
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// take waits until lim allows n more, in bursts it can grant.
func (p *pacer) take(ctx context.Context, lim *rate.Limiter, n int64) error {
	for n > 0 {
		k := min(n, int64(lim.Burst()))
		now := p.now()
		r := lim.ReserveN(now, int(k))
		if !r.OK() {
			return fmt.Errorf("scrub: rate limiter refused %d", k)
		}
		if d := r.DelayFrom(now); d > 0 {
			if err := p.sleep(ctx, d); err != nil {
				r.CancelAt(p.now())
				return err
			}
		}
		n -= k
	}
	return ctx.Err()
}

func (p *pacer) bytes(ctx context.Context, n int64) error { return p.take(ctx, p.b, n) }

func (p *pacer) objects(ctx context.Context) error { return p.take(ctx, p.o, 1) }

// pacedReader charges every byte read to the pacer's byte rate and counts
// them.
type pacedReader struct {
	ctx context.Context
	r   io.Reader
	p   *pacer
	n   int64
}

func (r *pacedReader) Read(b []byte) (int, error) {
	if len(b) > burstBytes {
		b = b[:burstBytes]
	}
	n, err := r.r.Read(b)
	r.n += int64(n)
	if perr := r.p.bytes(r.ctx, int64(n)); perr != nil && err == nil {
		err = perr
	}
	return n, err
}
