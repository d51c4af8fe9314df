package gateway

import (
	"net/http"
)

// Every bucket is private, so S3 refuses an anonymous request with 403
// AccessDenied. Most operations say "Access Denied."; those that never
// take an anonymous caller, whatever the bucket's policy, say why.
// anonymousRefusal picks the message S3 gives for the operation r names.
// It runs before routing, so it reads the operation from the method,
// the path's shape and the sub-resources, as the router would.
func (g *gateway) anonymousRefusal(r *http.Request) error {
	const (
		cannotInvoke = "Anonymous users cannot invoke this API. Please authenticate."
		cannotCopy   = "Anonymous users cannot copy objects. Please authenticate."
		cannotUpload = "Anonymous users cannot initiate multipart uploads. Please authenticate."
		putOwnership = "s3:PutBucketOwnershipControls does not support Anonymous requests!"
		getOwnership = "s3:GetBucketOwnershipControls does not support Anonymous requests!"
	)
	service, hasKey := g.pathShape(r)
	q := r.URL.Query()
	msg := ""
	switch {
	case service:
	case r.Method == http.MethodPut && q.Has("acl"):
		msg = cannotInvoke
	case hasKey && r.Method == http.MethodPost && q.Has("uploads"):
		msg = cannotUpload
	case hasKey && r.Method == http.MethodPost && q.Has("select"):
		msg = cannotInvoke
	case hasKey && r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && !q.Has("uploadId"):
		msg = cannotCopy
	case hasKey:
	case q.Has("ownershipControls") && r.Method == http.MethodGet:
		msg = getOwnership
	case q.Has("ownershipControls"):
		// DeleteBucketOwnershipControls answers as PutBucketOwnershipControls.
		msg = putOwnership
	case r.Method == http.MethodPut && len(q) == 0:
		msg = cannotInvoke // CreateBucket
	}
	if msg == "" {
		return apiErr(errAccessDenied)
	}
	return apiErrf(errAccessDenied, "%s", msg)
}
