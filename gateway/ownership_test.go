package gateway

import (
	"net/http"
	"testing"
)

// TestCreateBucketObjectOwnership: CreateBucket checks
// x-amz-object-ownership as S3 does, and a refused request creates no
// bucket.
func TestCreateBucketObjectOwnership(t *testing.T) {
	aclRefused := map[string]string{"Code": "InvalidBucketAclWithObjectOwnership",
		"Message": "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"}
	for _, c := range []struct {
		name   string
		header map[string]string
		want   map[string]string // nil: created
	}{
		{"none", nil, nil},
		{"enforced", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced"}, nil},
		{"preferred", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerPreferred"}, nil},
		{"object writer with an ACL", map[string]string{"X-Amz-Object-Ownership": "ObjectWriter", "X-Amz-Acl": "public-read"}, nil},
		{"enforced, private", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced", "X-Amz-Acl": "private"}, nil},
		{"enforced, owner full control", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced", "X-Amz-Acl": "bucket-owner-full-control"}, nil},
		{"unknown", map[string]string{"X-Amz-Object-Ownership": "invalid_ownership"}, map[string]string{
			"Code": "InvalidArgument", "Message": "Invalid x-amz-object-ownership header: invalid_ownership",
			"ArgumentName": "x-amz-object-ownership"}},
		{"enforced, public-read", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced", "X-Amz-Acl": "public-read"}, aclRefused},
		{"enforced, a grant", map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced", "X-Amz-Grant-Read": "id=someone"}, aclRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, h := newTestGateway(t, allowAll{})
			rec := do(h, req{method: "PUT", target: "/bkt", header: c.header})
			if c.want == nil {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
				expect(t, do(h, req{method: "HEAD", target: "/bkt"}), http.StatusOK, "")
				return
			}
			expectElems(t, rec, http.StatusBadRequest, c.want)
			expect(t, do(h, req{method: "HEAD", target: "/bkt"}), http.StatusNotFound, "")
		})
	}
}
