package peer

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

func TestTokenBucketShares(t *testing.T) {
	now := time.Unix(0, 0)
	b := newTokenBucket(1000, func() time.Time { return now })
	if d := b.take(sendBurst); d != 0 {
		t.Fatalf("a full bucket should send at once, wait %v", d)
	}
	// Two senders of 1000 bytes each: served in turn at the shared rate.
	if d := b.take(1000); d != time.Second {
		t.Fatalf("first wait %v, want 1s", d)
	}
	if d := b.take(1000); d != 2*time.Second {
		t.Fatalf("second wait %v, want 2s", d)
	}
	now = now.Add(2 * time.Second)
	if d := b.take(500); d != 500*time.Millisecond {
		t.Fatalf("after the debt is paid, wait %v, want 0.5s", d)
	}
}

func TestLimitedWriterDeliversAndStops(t *testing.T) {
	var buf bytes.Buffer
	p := newSendPacer(SendLimit{Rate: 1e9})
	w, err := p.writer(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 3*sendBurst+5)
	if n, err := w.Write(data); err != nil || n != len(data) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("wrote %d, %v", n, err)
	}
	slow := newSendPacer(SendLimit{Rate: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, _ = slow.writer(context.Background(), &buf)
	lw := w.(*limitedWriter)
	lw.ctx = ctx
	lw.b.tokens = 0
	if _, err := w.Write(data); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	delayed := newSendPacer(SendLimit{Delay: time.Hour})
	if _, err := delayed.writer(ctx, &buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("delay should end with ctx: %v", err)
	}
	var nilPacer *sendPacer
	if w, err := nilPacer.writer(ctx, &buf); err != nil || w != &buf {
		t.Fatal("nil pacer must pass the writer through")
	}
}
