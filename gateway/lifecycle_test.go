package gateway

import (
	"net/http"
	"strings"
	"testing"
)

const lifecycleXML = `<LifecycleConfiguration><Rule><ID>logs</ID><Status>Enabled</Status>` +
	`<Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>7</Days></Expiration></Rule></LifecycleConfiguration>`

func TestLifecycleConfiguration(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"obj": "x"})
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?lifecycle"}), http.StatusNotFound, "NoSuchLifecycleConfiguration")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?lifecycle", body: lifecycleXML}), http.StatusOK, "")
	rec := do(h, req{method: http.MethodGet, target: "/bkt?lifecycle"})
	expect(t, rec, http.StatusOK, "")
	for _, want := range []string{"<ID>logs</ID>", "<Prefix>logs/</Prefix>", "<Days>7</Days>", "<Status>Enabled</Status>"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("GetBucketLifecycleConfiguration body lacks %s: %s", want, rec.Body.String())
		}
	}
	// An object has no lifecycle of its own.
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/obj?lifecycle"}), http.StatusNotImplemented, "NotImplemented")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt?lifecycle"}), http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?lifecycle"}), http.StatusNotFound, "NoSuchLifecycleConfiguration")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt?lifecycle"}), http.StatusNoContent, "")
}

// A refused configuration gets S3's error and leaves the stored one.
func TestLifecycleConfigurationRefused(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?lifecycle", body: lifecycleXML}), http.StatusOK, "")
	cases := []struct{ name, target, body, code string }{
		{"no bucket", "/nope?lifecycle", lifecycleXML, "NoSuchBucket"},
		{"malformed", "/bkt?lifecycle", "<LifecycleConfiguration><Rule>", "MalformedXML"},
		{"no action", "/bkt?lifecycle", `<LifecycleConfiguration><Rule><Status>Enabled</Status></Rule></LifecycleConfiguration>`, "InvalidRequest"},
		{"zero days", "/bkt?lifecycle", strings.Replace(lifecycleXML, "<Days>7", "<Days>0", 1), "InvalidArgument"},
		{"transition", "/bkt?lifecycle", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule></LifecycleConfiguration>`, "NotImplemented"},
	}
	for _, c := range cases {
		rec := do(h, req{method: http.MethodPut, target: c.target, body: c.body})
		if rec.Code < 400 || !strings.Contains(rec.Body.String(), "<Code>"+c.code+"</Code>") {
			t.Errorf("%s: %d %s, want %s", c.name, rec.Code, rec.Body.String(), c.code)
		}
	}
	if body := do(h, req{method: http.MethodGet, target: "/bkt?lifecycle"}).Body.String(); !strings.Contains(body, "<Days>7</Days>") {
		t.Fatalf("a refused PUT changed the configuration: %s", body)
	}
}
