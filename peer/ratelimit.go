package peer

import (
	"context"
	"io"
	"sync"
	"time"
)

// SendLimit emulates a slower NIC and disk on one host: a token bucket of
// Rate bytes/s shared by every shard stream the peer sends (so
// concurrent streams share the rate, as on a real link) and a fixed Delay
// before each stream's first byte (seek and request handling). Zero
// fields disable each part.
type SendLimit struct {
	Rate  float64       // bytes per second; 0 unlimited
	Delay time.Duration // per shard stream
}

// sendBurst is the bucket depth: small enough to keep the rate smooth at
// millisecond scale, large enough for one write of io.Copy's buffer.
const sendBurst = 64 << 10

// tokenBucket is a shared byte budget. Safe for concurrent use.
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

func newTokenBucket(rate float64, now func() time.Time) *tokenBucket {
	return &tokenBucket{rate: rate, tokens: sendBurst, last: now(), now: now}
}

// take reserves n bytes and returns how long the caller must wait before
// sending them. Reservations queue: the bucket may go negative, so
// concurrent senders are served in turn at the shared rate.
func (b *tokenBucket) take(n int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.rate, sendBurst)
	b.last = now
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// limitedWriter paces writes through the bucket, in slices of at most
// sendBurst bytes, giving up when ctx ends.
type limitedWriter struct {
	ctx context.Context
	w   io.Writer
	b   *tokenBucket
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), sendBurst)
		if err := sleep(l.ctx, l.b.take(n)); err != nil {
			return written, err
		}
		m, err := l.w.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sendPacer applies a SendLimit to shard streams.
type sendPacer struct {
	limit SendLimit
	b     *tokenBucket
}

func newSendPacer(l SendLimit) *sendPacer {
	p := &sendPacer{limit: l}
	if l.Rate > 0 {
		p.b = newTokenBucket(l.Rate, time.Now)
	}
	return p
}

// writer returns w paced by the limit, after the per-stream delay.
func (p *sendPacer) writer(ctx context.Context, w io.Writer) (io.Writer, error) {
	if p == nil {
		return w, nil
	}
	if err := sleep(ctx, p.limit.Delay); err != nil {
		return nil, err
	}
	if p.b == nil {
		return w, nil
	}
	return &limitedWriter{ctx: ctx, w: w, b: p.b}, nil
}
