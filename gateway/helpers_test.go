package gateway

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"tessera/gateway/sigv4"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// allowAll authenticates every request and passes the body through, as a
// verifier would for an unsigned payload.
type allowAll struct{}

func (allowAll) Verify(r *http.Request) (*sigv4.Result, error) {
	return &sigv4.Result{Body: r.Body, Size: r.ContentLength}, nil
}

// denyWith fails every request with err.
type denyWith struct{ err error }

func (d denyWith) Verify(*http.Request) (*sigv4.Result, error) { return nil, d.err }

// bodyFailsWith passes the body through but fails its final Read with err,
// the way the verifier reports a bad chunk signature or checksum.
type bodyFailsWith struct{ err error }

func (b bodyFailsWith) Verify(r *http.Request) (*sigv4.Result, error) {
	return &sigv4.Result{Body: io.NopCloser(io.MultiReader(r.Body, errReader(b))), Size: r.ContentLength}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func newTestGateway(t testing.TB, auth Authenticator) (*fakeBackend, http.Handler) {
	t.Helper()
	be := newFakeBackend()
	be.minPartSize = 5
	h, err := New(Config{Backend: be, Auth: auth, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return be, h
}

// req describes a test request; target is sent as the request URI, so
// percent-encoding in it reaches the handler unchanged. A "Host" header
// sets the request's Host.
type req struct {
	method, target, body string
	header               map[string]string
}

func do(h http.Handler, rq req) *httptest.ResponseRecorder {
	r := httptest.NewRequest(rq.method, rq.target, strings.NewReader(rq.body))
	for k, v := range rq.header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// errorCode extracts <Code> from an S3 error body ("" when absent).
func errorCode(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Body.Len() == 0 {
		return ""
	}
	var e errorResponse
	if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body does not parse: %v\n%s", err, rec.Body.String())
	}
	return e.Code
}

// expect checks status and, when code is non-empty, the S3 error code.
func expect(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body.String())
	}
	if code != "" {
		if got := errorCode(t, rec); got != code {
			t.Fatalf("code %q, want %q; body %s", got, code, rec.Body.String())
		}
	}
}

// mustDo runs rq and requires a 2xx answer.
func mustDo(t testing.TB, h http.Handler, rq req) *httptest.ResponseRecorder {
	t.Helper()
	rec := do(h, rq)
	if rec.Code/100 != 2 {
		t.Fatalf("%s %s: status %d: %s", rq.method, rq.target, rec.Code, rec.Body.String())
	}
	return rec
}

func decodeXML(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := xml.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, rec.Body.String())
	}
}

// setup creates the bucket and the given objects (key → body).
func setup(t testing.TB, h http.Handler, bucket string, objects map[string]string) {
	t.Helper()
	mustDo(t, h, req{method: http.MethodPut, target: "/" + bucket})
	for k, v := range objects {
		mustDo(t, h, req{method: http.MethodPut, target: "/" + bucket + "/" + k, body: v})
	}
}

// expectElems checks an error response's status and body elements.
func expectElems(t testing.TB, rec *httptest.ResponseRecorder, status int, want map[string]string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body.String())
	}
	got := errorElems(t, rec.Body.Bytes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("<%s> = %q, want %q; body %s", k, got[k], v, rec.Body.String())
		}
	}
}
