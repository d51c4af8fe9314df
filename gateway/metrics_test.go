package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"tessera/gateway/sigv4"
)

func TestOperationName(t *testing.T) {
	g := &gateway{}
	cases := []struct {
		h    handlerFunc
		want string
	}{
		{g.getObject, "GetObject"},
		{g.putObject, "PutObject"},
		{g.listObjectsV2, "ListObjectsV2"},
		{g.createBucket, "CreateBucket"},
		{notImplemented, "NotImplemented"},
		{func(http.ResponseWriter, *http.Request) error { return nil }, "Other"},
	}
	for _, tc := range cases {
		if got := operationName(tc.h); got != tc.want {
			t.Errorf("operationName = %q, want %q", got, tc.want)
		}
	}
}

// TestMetricsWrap sends real S3 requests through the gateway and checks
// each is counted under its route's operation, status and bytes.
func TestMetricsWrap(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, h := newTestGateway(t, allowAll{})
	srv := httptest.NewServer(m.Wrap(h))
	defer srv.Close()
	send := func(method, path, body string) int {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	body := strings.Repeat("x", 1000)
	send("PUT", "/bkt", "")
	send("PUT", "/bkt/k", body)
	send("GET", "/bkt/k", "")
	send("GET", "/bkt/k", "")
	send("GET", "/bkt/missing", "")
	send("GET", "/bkt?acl", "")

	count := func(op, status string) float64 {
		return value(t, m.requests.WithLabelValues(op, status))
	}
	for _, c := range []struct {
		op, status string
		want       float64
	}{
		{"CreateBucket", "200", 1}, {"PutObject", "200", 1}, {"GetObject", "200", 2},
		{"GetObject", "404", 1}, {"NotImplemented", "501", 1},
	} {
		if got := count(c.op, c.status); got != c.want {
			t.Errorf("requests{%s,%s} = %v, want %v", c.op, c.status, got, c.want)
		}
	}
	if got := value(t, m.bytesIn.WithLabelValues("PutObject")); got != 1000 {
		t.Errorf("received bytes for PutObject = %v, want 1000", got)
	}
	if got := value(t, m.bytesOut.WithLabelValues("GetObject")); got < 2000 {
		t.Errorf("sent bytes for GetObject = %v, want >= 2000", got)
	}
	tot := m.Totals()
	if tot.Requests != 6 || tot.BytesIn != 1000 || tot.Mutations != 2 || tot.InFlight != 0 {
		t.Errorf("totals %+v: want 6 requests, 1000 bytes in, 2 mutations, none in flight", tot)
	}
	if _, _, _, ok := m.GetLatency(time.Minute); !ok {
		t.Error("no GET latency after two GETs")
	}
	var hist dto.Metric
	if err := m.duration.WithLabelValues("GetObject").(prometheus.Histogram).Write(&hist); err != nil ||
		hist.GetHistogram().GetSampleCount() != 3 {
		t.Errorf("GetObject duration histogram: %d samples (%v), want 3", hist.GetHistogram().GetSampleCount(), err)
	}
}

// A request failing authentication never reaches a route.
func TestMetricsUnrouted(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	_, h := newTestGateway(t, denyWith{sigv4.ErrSignatureDoesNotMatch})
	rec := httptest.NewRecorder()
	m.Wrap(h).ServeHTTP(rec, httptest.NewRequest("GET", "/bkt/k", nil))
	if got := value(t, m.requests.WithLabelValues("Unrouted", "403")); got != 1 {
		t.Errorf("requests{Unrouted,403} = %v, want 1 (status %d)", got, rec.Code)
	}
}

func TestLatencyWindow(t *testing.T) {
	var l latencyWindow
	now := time.Now()
	if _, _, _, ok := l.quantiles(now.Add(-time.Minute)); ok {
		t.Fatal("quantiles of nothing")
	}
	l.add(now.Add(-2*time.Minute), time.Hour) // outside the window
	for i := 1; i <= 100; i++ {
		l.add(now, time.Duration(i)*time.Millisecond)
	}
	p50, p95, p99, ok := l.quantiles(now.Add(-time.Minute))
	if !ok || p50 != 0.051 || p95 != 0.096 || p99 != 0.1 {
		t.Errorf("quantiles %v %v %v %v, want 0.051 0.096 0.1", p50, p95, p99, ok)
	}
}

func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
