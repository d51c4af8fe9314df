package peer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMeterCountsBothDirections(t *testing.T) {
	m := NewMeter()
	inside := make(chan int, 1)
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside <- m.Active()
		b, _ := io.ReadAll(r.Body)
		w.Write([]byte(strings.Repeat("x", 2*len(b))))
	}))
	start := time.Now()
	for range 3 {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("y", 1000)))
		h.ServeHTTP(httptest.NewRecorder(), req)
		if a := <-inside; a != 1 {
			t.Fatalf("active inside handler = %d", a)
		}
	}
	if sent, recv := m.Totals(); sent != 6000 || recv != 3000 {
		t.Fatalf("totals sent=%d recv=%d, want 6000 3000", sent, recv)
	}
	if m.Active() != 0 {
		t.Fatalf("active after = %d", m.Active())
	}
	now := start.Add(2 * time.Second)
	m.lastAt = start
	send, recv := m.Rate(now)
	if send != 3000 || recv != 1500 {
		t.Fatalf("rate send=%v recv=%v, want 3000 1500 B/s", send, recv)
	}
	if send, recv := m.Rate(now.Add(time.Second)); send != 0 || recv != 0 {
		t.Fatalf("idle rate send=%v recv=%v", send, recv)
	}
}
