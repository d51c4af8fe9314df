package gateway

import (
	"net/http"
	"slices"
	"strings"
)

// S3 takes an aws-chunked body (x-amz-content-sha256 STREAMING-*) only
// where it stores one: PutObject and UploadPart. Anywhere else, a bucket
// configuration or an object's tags, the payload mode itself is refused,
// before the body is read.

// checkStreamingUse refuses an aws-chunked body on an operation that
// stores none.
func (g *gateway) checkStreamingUse(r *http.Request) error {
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") || g.storesBody(r) {
		return nil
	}
	return apiErrf(errInvalidRequest, "The value of x-amz-content-sha256 header is invalid.")
}

// storesBody reports whether r is a PutObject or an UploadPart.
func (g *gateway) storesBody(r *http.Request) bool {
	if _, hasKey := g.pathShape(r); !hasKey || r.Method != http.MethodPut {
		return false
	}
	q := r.URL.Query()
	if q.Has("partNumber") && q.Has("uploadId") {
		return true
	}
	return !slices.ContainsFunc(unimplemented, q.Has)
}
