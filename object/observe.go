package object

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"tessera/meta"
)

// observe starts timing one shard stream for Config.Observe and returns
// the function that ends it with the bytes read; a no-op without Observe.
func (l *Layer) observe(peer meta.PeerID, bytes int64) func(err error, n int64) {
	if l.cfg.Observe == nil {
		return func(error, int64) {}
	}
	done := l.cfg.Observe(peer, bytes)
	start := time.Now()
	return func(err error, n int64) { done(err, n, time.Since(start)) }
}

// observedReader reports a shard stream's outcome once, at io.EOF, at the
// first other error, or at Close (a stream closed early, by a decoder
// that had enough, counts as a success for the bytes it gave).
type observedReader struct {
	rc   io.ReadCloser
	done func(err error, n int64)
	n    atomic.Int64 // Close may race a Read in progress
	once sync.Once
}

func (o *observedReader) Read(p []byte) (int, error) {
	n, err := o.rc.Read(p)
	total := o.n.Add(int64(n))
	switch {
	case errors.Is(err, io.EOF):
		o.once.Do(func() { o.done(nil, total) })
	case err != nil:
		o.once.Do(func() { o.done(err, total) })
	}
	return n, err
}

func (o *observedReader) Close() error {
	err := o.rc.Close()
	o.once.Do(func() { o.done(nil, o.n.Load()) })
	return err
}
