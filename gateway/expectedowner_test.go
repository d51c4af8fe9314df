package gateway

import (
	"net/http"
	"testing"

	"tessera/gateway/sigv4"
)

// signedBy authenticates every request as the access key it names.
type signedBy string

func (k signedBy) Verify(r *http.Request) (*sigv4.Result, error) {
	return &sigv4.Result{Body: r.Body, Size: r.ContentLength, AccessKey: string(k)}, nil
}

// TestExpectedBucketOwner: a request naming another account as the
// bucket's owner (or, on a copy, the source bucket's) is refused with
// AccessDenied and changes nothing; naming the signer's account, or
// nobody, goes through.
func TestExpectedBucketOwner(t *testing.T) {
	const owner = "AKIDOWNER"
	_, h := newTestGateway(t, signedBy(owner))
	mustDo(t, h, req{method: "PUT", target: "/bkt"})
	mustDo(t, h, req{method: "PUT", target: "/bkt/k", body: "data"})
	wrong := func(name string) map[string]string { return map[string]string{name: owner + "x"} }
	expected := "X-Amz-Expected-Bucket-Owner"
	source := "X-Amz-Source-Expected-Bucket-Owner"
	for _, c := range []req{
		{method: "DELETE", target: "/bkt/k", header: wrong(expected)},
		{method: "DELETE", target: "/bkt", header: wrong(expected)},
		{method: "GET", target: "/bkt/k", header: wrong(expected)},
		{method: "GET", target: "/bkt?list-type=2", header: wrong(expected)},
		{method: "PUT", target: "/bkt/k2", body: "other", header: wrong(expected)},
		{method: "PUT", target: "/bkt/k?tagging", body: `<Tagging><TagSet/></Tagging>`, header: wrong(expected)},
		{method: "PUT", target: "/bkt/k3", header: map[string]string{"X-Amz-Copy-Source": "bkt/k", source: "incorrect-owner"}},
		{method: "PUT", target: "/bkt/k3", header: map[string]string{"X-Amz-Copy-Source": "bkt/k", expected: "123456789012"}},
	} {
		expect(t, do(h, c), http.StatusForbidden, "AccessDenied")
	}
	for _, target := range []string{"/bkt/k2", "/bkt/k3"} {
		expect(t, do(h, req{method: "HEAD", target: target}), http.StatusNotFound, "")
	}
	if rec := mustDo(t, h, req{method: "GET", target: "/bkt/k"}); rec.Body.String() != "data" {
		t.Fatalf("object reads %q after refused requests", rec.Body.String())
	}

	// The signer's own account passes; the source header means nothing
	// outside a copy, as in S3.
	right := map[string]string{expected: owner}
	mustDo(t, h, req{method: "GET", target: "/bkt/k", header: right})
	mustDo(t, h, req{method: "GET", target: "/", header: wrong(expected)})
	mustDo(t, h, req{method: "GET", target: "/bkt/k", header: wrong(source)})
	mustDo(t, h, req{method: "PUT", target: "/bkt/k3", header: map[string]string{
		"X-Amz-Copy-Source": "bkt/k", expected: owner, source: owner}})
	mustDo(t, h, req{method: "DELETE", target: "/bkt/k", header: right})
}
