package gateway

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tessera/gateway/sigv4"
)

// TestExpectContinue: a client sending Expect: 100-continue waits for
// permission before sending its body. A request refused up front (here
// unauthenticated) must get its answer without the body; an accepted one
// gets 100 Continue, then its answer. Both through the metrics wrapper the
// servers run, which once hid the server's 100-continue reader and made it
// wait for a body the client never sent.
func TestExpectContinue(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		auth  Authenticator
		first string
	}{
		{"refused", denyWith{sigv4.ErrMissingAuth}, "HTTP/1.1 403 Forbidden"},
		{"accepted", allowAll{}, "HTTP/1.1 100 Continue"},
	} {
		t.Run(c.name, func(t *testing.T) {
			be, h := newTestGateway(t, c.auth)
			if err := be.MakeBucket(t.Context(), "bkt"); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m.Wrap(h))
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "PUT /bkt/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
			if _, err := conn.Write([]byte(head)); err != nil {
				t.Fatal(err)
			}
			if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			line, err := br.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != c.first {
				t.Fatalf("first line %q, %v; want %q", line, err, c.first)
			}
			if c.first != "HTTP/1.1 100 Continue" {
				return
			}
			if _, err := conn.Write([]byte("hello")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(skipInterim(t, br), nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("after the body: %v %v", resp, err)
			}
		})
	}
}

// skipInterim consumes the rest of a 1xx response.
func skipInterim(t *testing.T, br *bufio.Reader) *bufio.Reader {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			return br
		}
	}
}
