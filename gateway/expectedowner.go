package gateway

import "net/http"

// checkExpectedOwner enforces x-amz-expected-bucket-owner and, on a copy,
// x-amz-source-expected-bucket-owner: a request naming an account other
// than the bucket's owner is refused with 403 AccessDenied and changes
// nothing, as in S3. Clients send these to be sure a bucket name still
// belongs to them. tessera has one account, whose ID is the access key
// (see requestOwner), so every bucket is owned by the key that signed
// the request.
func (g *gateway) checkExpectedOwner(r *http.Request) error {
	if service, _ := g.pathShape(r); service {
		return nil
	}
	headers := []string{"X-Amz-Expected-Bucket-Owner"}
	if r.Header.Get("X-Amz-Copy-Source") != "" {
		headers = append(headers, "X-Amz-Source-Expected-Bucket-Owner")
	}
	owner := requestOwner(r).ID
	for _, h := range headers {
		if v := r.Header.Get(h); v != "" && v != owner {
			return apiErr(errAccessDenied)
		}
	}
	return nil
}
