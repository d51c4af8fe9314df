package server

import (
	"encoding/xml"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStartGate: until ready first passes every request is a 503 with an
// S3 error body (none for HEAD) and never reaches the handler; once it
// passed, the gate stays open even when ready fails again. The admin API
// is never held back.
func TestStartGate(t *testing.T) {
	readyErr := errors.New("2 peers alive")
	served := 0
	g := &startGate{ready: func() error { return readyErr },
		next: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++ })}
	steps := []struct {
		method   string
		path     string
		ready    error
		status   int
		reaching bool
	}{
		{http.MethodPut, "/bkt/key", readyErr, http.StatusServiceUnavailable, false},
		{http.MethodHead, "/bkt/key", readyErr, http.StatusServiceUnavailable, false},
		{http.MethodGet, "/.tessera/admin/v1/status", readyErr, http.StatusOK, true},
		{http.MethodPut, "/bkt/key", readyErr, http.StatusServiceUnavailable, false}, // still closed
		{http.MethodGet, "/bkt/key", nil, http.StatusOK, true},
		{http.MethodPut, "/bkt/key", readyErr, http.StatusOK, true}, // open for good
	}
	for i, s := range steps {
		readyErr = s.ready
		before := served
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest(s.method, s.path, nil))
		if rec.Code != s.status || (served > before) != s.reaching {
			t.Fatalf("step %d (%s): status %d, reached handler %v; want %d, %v", i, s.method, rec.Code, served > before, s.status, s.reaching)
		}
		if rec.Code != http.StatusServiceUnavailable {
			continue
		}
		if rec.Header().Get("Retry-After") == "" || rec.Header().Get("X-Amz-Request-Id") == "" {
			t.Fatalf("step %d: headers %v", i, rec.Header())
		}
		if s.method == http.MethodHead {
			if rec.Body.Len() != 0 {
				t.Fatalf("HEAD answered with a body: %q", rec.Body)
			}
			continue
		}
		var e struct{ Code, Message, Resource string }
		if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("step %d: body %q: %v", i, rec.Body, err)
		}
		if e.Code != "ServiceUnavailable" || e.Resource != "/bkt/key" || !strings.Contains(e.Message, "2 peers alive") {
			t.Fatalf("step %d: error %+v", i, e)
		}
	}
}
