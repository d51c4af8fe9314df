package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"tessera/gateway"
)

// startGate holds S3 requests back until the gateway is first ready. Before
// that the peers are still joining: a bucket made then would land on the
// few peers already in, a key looked up then could read as missing, and a
// write could be refused as wider than the ring. Each would be a 4xx that
// clients do not retry, so every request gets a 503 instead, which they
// do. The gate opens once, when Ready first passes, and stays open: later
// outages are the object layer's to answer, request by request.
type startGate struct {
	ready func() error
	next  http.Handler
	open  atomic.Bool
}

func (g *startGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The admin API answers from the start: while the cluster is not
	// ready, status is what an operator asks for first.
	if !g.open.Load() && !strings.HasPrefix(r.URL.Path, gateway.AdminPrefix) {
		if err := g.ready(); err != nil {
			writeStarting(w, r, err)
			return
		}
		g.open.Store(true)
	}
	g.next.ServeHTTP(w, r)
}

// startingError is the S3 error body of a request the gate holds back.
type startingError struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource"`
	RequestID string   `xml:"RequestId"`
}

// writeStarting answers 503 ServiceUnavailable with Retry-After, the
// status and code SDKs retry with backoff.
func writeStarting(w http.ResponseWriter, r *http.Request, reason error) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	reqID := hex.EncodeToString(id[:])
	h := w.Header()
	h.Set("X-Amz-Request-Id", reqID)
	h.Set("Retry-After", "1")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	// Marshal cannot fail on a struct of strings.
	body, _ := xml.Marshal(startingError{Code: "ServiceUnavailable",
		Message:  "The cluster is starting (" + reason.Error() + "); please retry.",
		Resource: r.URL.Path, RequestID: reqID})
	body = append([]byte(xml.Header), body...)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}
