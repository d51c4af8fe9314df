package peer

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Nodes with the same cluster secret talk to each other; a client with
// another secret, with no certificate, or speaking plain HTTP is refused
// before any request reaches the handler.
func TestClusterTLS(t *testing.T) {
	server, err := NewTLS([]byte("the cluster secret"))
	if err != nil {
		t.Fatal(err)
	}
	same, err := NewTLS([]byte("the cluster secret")) // another node, its own key
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewTLS([]byte("another cluster's secret"))
	if err != nil {
		t.Fatal(err)
	}
	noCert := same.Client.Clone()
	noCert.Certificates = nil
	var reached atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = server.Server
	srv.StartTLS()
	defer srv.Close()
	cases := []struct {
		name   string
		scheme string
		cfg    *tls.Config
		ok     bool
	}{
		{"same secret", "https", same.Client, true},
		{"the server's own config", "https", server.Client, true},
		{"another secret", "https", other.Client, false},
		{"no client certificate", "https", noCert, false},
		{"plain http", "http", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc.cfg}}
			defer hc.CloseIdleConnections()
			url := tc.scheme + "://" + strings.TrimPrefix(srv.URL, "https://")
			resp, err := hc.Get(url)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(body) != "ok" {
					err = &statusErr{resp.StatusCode}
				}
			}
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("accepted")
			}
			if !tc.ok && reached.Load() != before {
				t.Fatal("a refused client's request reached the handler")
			}
		})
	}
}

type statusErr struct{ code int }

func (e *statusErr) Error() string { return http.StatusText(e.code) }

// Every node derives the same CA from the secret, so a certificate one
// issues verifies against the CA another built.
func TestClusterCADeterministic(t *testing.T) {
	_, a, err := clusterCA([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := clusterCA([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	_, c, err := clusterCA([]byte("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Equal(b) {
		t.Error("one secret gave two CA certificates")
	}
	if a.Equal(c) || string(a.SubjectKeyId) == string(c.SubjectKeyId) {
		t.Error("two secrets gave one CA")
	}
}
