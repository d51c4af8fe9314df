package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
)

// metaHeader reads x-amz-meta-NAME as S3 sends it: lowercase and not
// canonicalised, so http.Header.Get would miss it.
func metaHeader(h http.Header, name string) string {
	if v := h[metaPrefix+name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func httpRequest(method, target, body string) *http.Request {
	return httptest.NewRequest(method, target, strings.NewReader(body))
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}
