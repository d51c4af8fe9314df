package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// TestAccessAndErrorLogs checks each request's access line and the level
// of its error line: only the server's own failures are errors, and the
// access line is debug unless AccessLog asks for it.
func TestAccessAndErrorLogs(t *testing.T) {
	cases := []struct {
		name      string
		accessLog bool
		rq        req
		fail      bool // the backend fails every call
		status    int
		access    string // level of the access line
		errMsg    string // message of the error line, "" for none
		errLevel  string
	}{
		{name: "server failure", rq: req{method: http.MethodGet, target: "/bkt/a%20key"}, fail: true,
			status: 500, access: "debug", errMsg: "request failed", errLevel: "error"},
		{name: "access log asked for", accessLog: true, rq: req{method: http.MethodGet, target: "/bkt/a%20key"}, fail: true,
			status: 500, access: "info", errMsg: "request failed", errLevel: "error"},
		{name: "missing key", rq: req{method: http.MethodGet, target: "/bkt/a%20key"},
			status: 404, access: "debug", errMsg: "request rejected", errLevel: "debug"},
		{name: "not implemented", rq: req{method: http.MethodPut, target: "/other",
			header: map[string]string{"X-Amz-Bucket-Object-Lock-Enabled": "true"}},
			status: 501, access: "debug", errMsg: "request rejected", errLevel: "debug"},
		{name: "success", rq: req{method: http.MethodHead, target: "/bkt"}, status: 200, access: "debug"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			be := newFakeBackend()
			h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.New(&logs), AccessLog: tc.accessLog})
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
			if tc.fail {
				be.fail = func(string) error { return errors.New("backend broke") }
			}
			rec := do(h, tc.rq)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			access, failure := requestLines(t, &logs, rec.Header().Get("X-Amz-Request-Id"))
			if access == nil || access["method"] != tc.rq.method || access["status"] != float64(tc.status) ||
				access["level"] != tc.access || access["component"] != "gateway" || access["dur"] == nil || access["bytes"] == nil {
				t.Errorf("access log %v, want level %s", access, tc.access)
			}
			if tc.errMsg == "" {
				if failure != nil {
					t.Errorf("error line %v for a success", failure)
				}
				return
			}
			if failure == nil || failure["message"] != tc.errMsg || failure["level"] != tc.errLevel || failure["code"] == nil {
				t.Errorf("error log %v, want %q at %s", failure, tc.errMsg, tc.errLevel)
			}
		})
	}
}

// requestLines returns the access line and the error line (if any) of the
// request with id reqID.
func requestLines(t *testing.T, logs *syncBuffer, reqID string) (access, failure map[string]any) {
	t.Helper()
	for _, l := range logs.lines(t) {
		if l["req_id"] != reqID {
			continue
		}
		switch l["message"] {
		case "request":
			access = l
		case "request failed", "request rejected":
			failure = l
		}
	}
	return access, failure
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

// brokenWriter is a client connection that broke: every body write fails.
type brokenWriter struct{ *httptest.ResponseRecorder }

func (w brokenWriter) Write([]byte) (int, error) { return 0, errors.New("write tcp: broken pipe") }

// TestResponseFailureAfterStart: a response that fails after it started
// aborts the connection, and is an error line only when the server failed;
// a client that hung up or cancelled mid-body is logged at debug.
func TestResponseFailureAfterStart(t *testing.T) {
	cases := []struct {
		name   string
		broken bool // the client's connection broke: writes fail
		cancel bool // the client cancelled the request
		level  string
	}{
		{name: "server failed mid-body", level: "error"},
		{name: "client connection broke", broken: true, level: "debug"},
		{name: "client cancelled", cancel: true, level: "debug"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			ctx, cancel := context.WithCancel(zerolog.New(&logs).WithContext(context.Background()))
			defer cancel()
			h := adapt(func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusOK)
				if _, err := w.Write([]byte("first block")); err != nil {
					return fmt.Errorf("decode block 0: write: %w", err)
				}
				if tc.cancel {
					cancel()
				}
				return errors.New("peer stream broke")
			})
			var w http.ResponseWriter = httptest.NewRecorder()
			if tc.broken {
				w = brokenWriter{httptest.NewRecorder()}
			}
			r := httptest.NewRequest(http.MethodGet, "/bkt/k", nil).WithContext(ctx)
			func() {
				defer func() {
					if p := recover(); p != http.ErrAbortHandler {
						t.Errorf("recovered %v, want http.ErrAbortHandler", p)
					}
				}()
				h.ServeHTTP(w, r)
			}()
			var got []string
			for _, l := range logs.lines(t) {
				if l["message"] == "response failed after it started; aborting connection" {
					got = append(got, fmt.Sprint(l["level"]))
				}
			}
			if len(got) != 1 || got[0] != tc.level {
				t.Errorf("failure logged at %v, want once at %s", got, tc.level)
			}
		})
	}
}
