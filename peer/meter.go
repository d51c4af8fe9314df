package peer

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Meter counts a shard API's traffic: request body bytes received,
// response bytes sent and requests in progress. Rate turns the counts
// into bytes per second since its previous call, for gossip. Safe for
// concurrent use.
type Meter struct {
	sent, recv atomic.Int64
	active     atomic.Int64

	mu                 sync.Mutex
	lastAt             time.Time
	lastSent, lastRecv int64
}

// NewMeter returns a Meter whose first Rate covers the time since now.
func NewMeter() *Meter { return &Meter{lastAt: time.Now()} }

// Wrap returns h counting through m.
func (m *Meter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.active.Add(1)
		defer m.active.Add(-1)
		if r.Body != nil {
			r.Body = &countingBody{ReadCloser: r.Body, n: &m.recv}
		}
		h.ServeHTTP(&countingWriter{ResponseWriter: w, n: &m.sent}, r)
	})
}

// Active is the number of requests in progress.
func (m *Meter) Active() int { return int(m.active.Load()) }

// Totals returns the bytes sent and received so far.
func (m *Meter) Totals() (sent, recv int64) { return m.sent.Load(), m.recv.Load() }

// Rate returns bytes per second sent and received since the previous
// call (or NewMeter).
func (m *Meter) Rate(now time.Time) (sendBps, recvBps float64) {
	sent, recv := m.Totals()
	m.mu.Lock()
	defer m.mu.Unlock()
	d := now.Sub(m.lastAt).Seconds()
	if d > 0 {
		sendBps, recvBps = float64(sent-m.lastSent)/d, float64(recv-m.lastRecv)/d
	}
	m.lastAt, m.lastSent, m.lastRecv = now, sent, recv
	return sendBps, recvBps
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushes, deadlines).
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Begin counts a call served without HTTP (an in-process caller reaching
// the store directly) as in progress until the returned func runs.
func (m *Meter) Begin() (end func()) {
	m.active.Add(1)
	return func() { m.active.Add(-1) }
}

// Received returns r counting what is read from it as bytes received.
func (m *Meter) Received(r io.Reader) io.Reader {
	return &countingBody{ReadCloser: io.NopCloser(r), n: &m.recv}
}

// Sent returns rc counting what is read from it as bytes sent.
func (m *Meter) Sent(rc io.ReadCloser) io.ReadCloser {
	return &countingBody{ReadCloser: rc, n: &m.sent}
}
