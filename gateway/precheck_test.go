package gateway

import (
	"strings"
	"testing"

	"tessera/gateway/sigv4"
)

// TestPrecheck: requests that name no S3 operation get S3's 400 or 405
// before their credentials are looked at (here there are none).
func TestPrecheck(t *testing.T) {
	be, h := newTestGateway(t, denyWith{sigv4.ErrMissingAuth})
	before := be.mutations()
	for _, c := range []struct {
		method, target string
		header         map[string]string
		status         int
		code           string
		fields         []string
	}{
		{"POST", "/", nil, 405, "MethodNotAllowed", []string{"<Method>POST</Method>", "<ResourceType>SERVICE</ResourceType>"}},
		{"PUT", "/", nil, 405, "MethodNotAllowed", []string{"<Method>PUT</Method>"}},
		{"POST", "/bkt/k", nil, 405, "MethodNotAllowed", []string{"<ResourceType>SERVICE</ResourceType>"}},
		{"PUT", "/bkt/k?uploadId=x", nil, 405, "MethodNotAllowed", []string{"<ResourceType>UPLOAD</ResourceType>"}},
		{"PUT", "/bkt/k?partNumber=1", nil, 400, "InvalidArgument", []string{"<ArgumentName>partNumber</ArgumentName>"}},
		{"GET", "/bkt/k?uploads", nil, 400, "InvalidRequest", nil},
		{"GET", "/bkt/k?versions", nil, 400, "InvalidRequest", nil},
		{"GET", "/bkt/k", map[string]string{"X-Amz-Copy-Source": "b/o"}, 400, "InvalidArgument", []string{"<ArgumentValue>b/o</ArgumentValue>"}},
		{"POST", "/bkt?uploadId=x", map[string]string{"X-Amz-Copy-Source": "b/o"}, 400, "InvalidArgument", nil},
		{"PUT", "/bkt/k", map[string]string{"X-Amz-Custom": strings.Repeat("d", 8<<10)}, 400, "RequestHeaderSectionTooLarge", []string{"<MaxSizeAllowed>8192</MaxSizeAllowed>"}},
		// Requests that do name an operation go on to authentication.
		{"PUT", "/bkt/k?partNumber=1&uploadId=x", nil, 403, "AccessDenied", nil},
		{"POST", "/bkt/k?uploads", nil, 403, "AccessDenied", nil},
		{"GET", "/bkt/k?partNumber=1", nil, 403, "AccessDenied", nil},
		{"PUT", "/bkt/k", map[string]string{"X-Amz-Copy-Source": "b/o"}, 403, "AccessDenied", nil},
		{"GET", "/", nil, 403, "AccessDenied", nil},
	} {
		rec := do(h, req{method: c.method, target: c.target, header: c.header})
		body := rec.Body.String()
		if rec.Code != c.status || errorCode(t, rec) != c.code {
			t.Errorf("%s %s: %d %s", c.method, c.target, rec.Code, body)
		}
		for _, f := range c.fields {
			if !strings.Contains(body, f) {
				t.Errorf("%s %s: body lacks %s: %s", c.method, c.target, f, body)
			}
		}
	}
	rec := do(h, req{method: "PUT", target: "/bkt/k?uploadId=x"})
	if got := rec.Header().Get("Allow"); got != "DELETE, POST, GET" {
		t.Errorf("Allow %q", got)
	}
	if be.mutations() != before {
		t.Error("a rejected request changed the backend")
	}
}
