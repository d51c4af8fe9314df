package gateway

import (
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
)

// TestAnonymousRefusals: an unsigned request is refused with S3's
// AccessDenied, whose message depends on the operation.
func TestAnonymousRefusals(t *testing.T) {
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: denyWith{sigv4.ErrMissingAuth}, Logger: zerolog.Nop(), Domains: []string{"s3.test"}})
	if err != nil {
		t.Fatal(err)
	}
	const (
		denied       = "Access Denied."
		cannotInvoke = "Anonymous users cannot invoke this API. Please authenticate."
		putOwnership = "s3:PutBucketOwnershipControls does not support Anonymous requests!"
	)
	copySrc := map[string]string{"X-Amz-Copy-Source": "bkt/src"}
	for _, c := range []struct {
		method, target, host string
		header               map[string]string
		msg                  string
	}{
		{"GET", "/", "", nil, denied},
		{"PUT", "/bkt", "", nil, cannotInvoke},
		{"PUT", "/", "bkt.s3.test", nil, cannotInvoke},
		{"PUT", "/bkt?acl", "", nil, cannotInvoke},
		{"PUT", "/bkt/k?acl", "", nil, cannotInvoke},
		{"PUT", "/bkt?versioning", "", nil, denied},
		{"PUT", "/bkt?cors", "", nil, denied},
		{"DELETE", "/bkt", "", nil, denied},
		{"PUT", "/bkt?ownershipControls", "", nil, putOwnership},
		{"DELETE", "/bkt?ownershipControls", "", nil, putOwnership},
		{"GET", "/bkt?ownershipControls", "", nil, "s3:GetBucketOwnershipControls does not support Anonymous requests!"},
		{"GET", "/bkt", "", nil, denied},
		{"POST", "/bkt/k?uploads", "", nil, "Anonymous users cannot initiate multipart uploads. Please authenticate."},
		{"POST", "/k?uploads", "bkt.s3.test", nil, "Anonymous users cannot initiate multipart uploads. Please authenticate."},
		{"POST", "/bkt/k?uploadId=u", "", nil, denied},
		{"POST", "/bkt/k?select&select-type=2", "", nil, cannotInvoke},
		{"PUT", "/bkt/k", "", copySrc, "Anonymous users cannot copy objects. Please authenticate."},
		{"PUT", "/bkt/k?partNumber=1&uploadId=u", "", copySrc, denied},
		{"PUT", "/bkt/k", "", nil, denied},
		{"GET", "/bkt/k", "", nil, denied},
		{"DELETE", "/bkt/k", "", nil, denied},
	} {
		r := req{method: c.method, target: c.target, header: map[string]string{}}
		for k, v := range c.header {
			r.header[k] = v
		}
		if c.host != "" {
			r.header["Host"] = c.host
		}
		expectElems(t, do(h, r), http.StatusForbidden, map[string]string{"Code": "AccessDenied", "Message": c.msg})
	}
	if be.mutations() != 0 {
		t.Error("an anonymous request changed the backend")
	}
}
