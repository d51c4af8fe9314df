package gateway

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics records every S3 request's operation, status, latency and bytes
// as Prometheus series, and keeps running totals and a window of recent
// GET latencies for the status page. Wrap the S3 handler with Wrap; the
// operation name comes from the route that served the request. Safe for
// concurrent use.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	inFlight prometheus.Gauge

	nReq, nErr, nIn, nOut, nMut atomic.Uint64
	active                      atomic.Int64
	gets                        latencyWindow
}

// Totals are the running counts since start.
type Totals struct {
	Requests, ServerErrors, BytesIn, BytesOut uint64
	// Mutations counts successful requests that may change what a bucket
	// holds (PUT, POST, DELETE with a 2xx status).
	Mutations uint64
	InFlight  int64
}

// NewMetrics registers the S3 series with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tessera", Subsystem: "s3", Name: "requests_total",
			Help: "S3 requests by operation and HTTP status (\"aborted\": the connection was cut before a status).",
		}, []string{"operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "tessera", Subsystem: "s3", Name: "request_duration_seconds",
			Help:    "S3 request latency, from the request's arrival to the response body's end.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"operation"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tessera", Subsystem: "s3", Name: "received_bytes_total",
			Help: "Request body bytes read, as sent on the wire (chunk signatures included).",
		}, []string{"operation"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tessera", Subsystem: "s3", Name: "sent_bytes_total",
			Help: "Response body bytes written.",
		}, []string{"operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "tessera", Subsystem: "s3", Name: "requests_in_flight",
			Help: "S3 requests being served.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.bytesIn, m.bytesOut, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Totals returns the running counts.
func (m *Metrics) Totals() Totals {
	return Totals{Requests: m.nReq.Load(), ServerErrors: m.nErr.Load(), BytesIn: m.nIn.Load(),
		BytesOut: m.nOut.Load(), Mutations: m.nMut.Load(), InFlight: m.active.Load()}
}

// GetLatency returns the p50, p95 and p99 of successful GetObject latencies
// in seconds over the last window; ok is false when there were none.
func (m *Metrics) GetLatency(window time.Duration) (p50, p95, p99 float64, ok bool) {
	return m.gets.quantiles(time.Now().Add(-window))
}

type opKey struct{}

// opHolder carries the operation name from the route back out to Wrap.
type opHolder struct{ op string }

// setOperation records the serving route's operation on the request.
func setOperation(r *http.Request, op string) {
	if h, ok := r.Context().Value(opKey{}).(*opHolder); ok {
		h.op = op
	}
}

// Wrap returns next with every request recorded.
func (m *Metrics) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.active.Add(1)
		m.inFlight.Inc()
		holder := &opHolder{op: "Unrouted"}
		// The counting body goes on a copy of the request: the server
		// inspects its own request's Body after the handler answers, and
		// must still find its 100-continue reader there, or it drains a
		// body the client is waiting for permission to send, and the
		// client waits for an answer that never comes.
		inner := r.WithContext(context.WithValue(r.Context(), opKey{}, holder))
		body := &countingBody{ReadCloser: r.Body}
		if r.Body != nil && r.Body != http.NoBody {
			inner.Body = body
		}
		cw := &countingWriter{ResponseWriter: w}
		defer func() {
			m.active.Add(-1)
			m.inFlight.Dec()
			m.record(r.Method, holder.op, cw.status, body.n.Load(), cw.n, time.Since(start))
		}()
		next.ServeHTTP(cw, inner)
	})
}

func (m *Metrics) record(method, op string, status int, in, out int64, dur time.Duration) {
	code := "aborted"
	if status != 0 {
		code = strconv.Itoa(status)
	}
	m.requests.WithLabelValues(op, code).Inc()
	m.duration.WithLabelValues(op).Observe(dur.Seconds())
	m.bytesIn.WithLabelValues(op).Add(float64(in))
	m.bytesOut.WithLabelValues(op).Add(float64(out))
	m.nReq.Add(1)
	m.nIn.Add(uint64(in))
	m.nOut.Add(uint64(out))
	if status >= 500 || status == 0 {
		m.nErr.Add(1)
	}
	if status >= 200 && status < 300 && method != http.MethodGet && method != http.MethodHead {
		m.nMut.Add(1)
	}
	if op == "GetObject" && (status == http.StatusOK || status == http.StatusPartialContent) {
		m.gets.add(time.Now(), dur)
	}
}

// operationName turns a handler into its S3 operation name:
// (*gateway).getObject becomes GetObject. Closures, which serve the
// router's not-found and method-not-allowed cases, are "Other".
func operationName(h handlerFunc) string {
	f := runtime.FuncForPC(reflect.ValueOf(h).Pointer())
	if f == nil {
		return "Other"
	}
	name := strings.TrimSuffix(f.Name(), "-fm")
	name = name[strings.LastIndexByte(name, '.')+1:]
	if name == "" || strings.HasPrefix(name, "func") {
		return "Other"
	}
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// countingBody counts request body bytes. Handlers of one request may read
// from goroutines, hence the atomic.
type countingBody struct {
	io.ReadCloser
	n atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countingWriter records the status and counts body bytes.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush keeps streaming responses streaming through the wrapper.
func (w *countingWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// latencyWindow keeps the last few thousand GET latencies.
type latencyWindow struct {
	mu   sync.Mutex
	at   [2048]time.Time
	dur  [2048]time.Duration
	next int
}

func (l *latencyWindow) add(at time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at[l.next], l.dur[l.next] = at, d
	l.next = (l.next + 1) % len(l.at)
}

func (l *latencyWindow) quantiles(since time.Time) (p50, p95, p99 float64, ok bool) {
	l.mu.Lock()
	var ds []float64
	for i := range l.at {
		if !l.at[i].IsZero() && !l.at[i].Before(since) {
			ds = append(ds, l.dur[i].Seconds())
		}
	}
	l.mu.Unlock()
	if len(ds) == 0 {
		return 0, 0, 0, false
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return q(0.50), q(0.95), q(0.99), true
}
