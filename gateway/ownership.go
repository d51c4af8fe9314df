package gateway

import (
	"net/http"
	"strings"
)

// objectOwnerships are the values of x-amz-object-ownership.
var objectOwnerships = map[string]bool{
	"BucketOwnerEnforced": true, "BucketOwnerPreferred": true, "ObjectWriter": true,
}

// checkObjectOwnership validates CreateBucket's x-amz-object-ownership as
// S3 does, though tessera stores no ownership setting: with one account
// and no ACLs every bucket behaves as BucketOwnerEnforced, S3's default.
// An unknown value is 400 InvalidArgument; BucketOwnerEnforced asked for
// together with an ACL that grants anyone but the owner (a canned ACL
// other than private or bucket-owner-full-control, or any x-amz-grant-*
// header) is 400 InvalidBucketAclWithObjectOwnership, so a client is told
// its ACL will not apply rather than ignored.
func checkObjectOwnership(h http.Header) error {
	o := h.Get("X-Amz-Object-Ownership")
	if o == "" {
		return nil
	}
	if !objectOwnerships[o] {
		return withFields(apiErrf(errInvalidArgument, "Invalid x-amz-object-ownership header: %s", o),
			errorField{"ArgumentName", "x-amz-object-ownership"})
	}
	if o != "BucketOwnerEnforced" {
		return nil
	}
	switch h.Get("X-Amz-Acl") {
	case "", "private", "bucket-owner-full-control":
	default:
		return apiErr(errInvalidBucketACLWithOwnership)
	}
	for name := range h {
		if strings.HasPrefix(name, "X-Amz-Grant-") {
			return apiErr(errInvalidBucketACLWithOwnership)
		}
	}
	return nil
}
