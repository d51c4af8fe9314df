package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealthcheck(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health/ready":
			_, _ = w.Write([]byte("ready\n"))
		case "/health/starting":
			http.Error(w, "not ready: the ring has 2 peers", http.StatusServiceUnavailable)
		case "/health/slow":
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/health/ready"
	ln.Close()
	cases := []struct {
		name, url string
		code      int
		says      string
	}{
		{"ready", srv.URL + "/health/ready", 0, ""},
		{"not ready", srv.URL + "/health/starting", 1, "503 Service Unavailable: not ready: the ring has 2 peers"},
		{"nothing listening", closed, 1, "connection refused"},
		{"too slow", srv.URL + "/health/slow", 1, "deadline exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			start := time.Now()
			err := run([]string{"healthcheck", "--url", tc.url, "--timeout", "300ms"}, io.Discard, io.Discard)
			if code := exitCode(err, &stderr); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.says)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v with a 300ms timeout", d)
			}
		})
	}
}
