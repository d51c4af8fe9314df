package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the logged JSON objects.
func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAccessAndErrorLogs(t *testing.T) {
	var logs syncBuffer
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
	be.fail = func(string) error { return errors.New("backend broke") }
	rec := do(h, req{method: http.MethodGet, target: "/bkt/a%20key"})
	expect(t, rec, http.StatusInternalServerError, "InternalError")
	reqID := rec.Header().Get("X-Amz-Request-Id")

	var access, failure map[string]any
	for _, l := range logs.lines(t) {
		if l["req_id"] != reqID {
			continue
		}
		switch l["message"] {
		case "request":
			access = l
		case "request failed":
			failure = l
		}
	}
	if access == nil || access["method"] != "GET" || access["path"] != "/bkt/a%20key" || access["status"] != float64(500) ||
		access["component"] != "gateway" || access["dur"] == nil || access["bytes"] == nil {
		t.Errorf("access log %v", access)
	}
	if failure == nil || failure["error"] != "backend broke" || failure["code"] != "InternalError" {
		t.Errorf("error log %v", failure)
	}
}

// TestHandlerPanicAbortsConnection: a panic below the handlers is logged
// and the connection dropped, never answered as a success.
func TestHandlerPanicAbortsConnection(t *testing.T) {
	var logs syncBuffer
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
	be.fail = func(op string) error {
		if op == "HeadObject" {
			panic("nil map somewhere")
		}
		return nil
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	resp, err := client.Head(srv.URL + "/bkt/k")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("panicking request answered %d", resp.StatusCode)
	}
	found := false
	for _, l := range logs.lines(t) {
		if l["message"] == "handler panic" && l["panic"] == "nil map somewhere" && l["stack"] != nil {
			found = true
		}
	}
	if !found {
		t.Error("panic not logged")
	}
}
