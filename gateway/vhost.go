package gateway

import (
	"net/http"
	"net/url"

	"tessera/gateway/sigv4"
)

// virtualHost turns a virtual-hosted-style request (Host BUCKET.DOMAIN)
// into its path-style equivalent. It runs after authentication, because
// the signature covers the path as the client sent it.
func (g *gateway) virtualHost(next http.Handler) http.Handler {
	if len(g.domains) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bucket := bucketFromHost(r.Host, g.domains); bucket != "" {
			r2 := r.Clone(r.Context())
			u := *r.URL
			u.Path = "/" + bucket + r.URL.Path
			u.RawPath = "/" + url.PathEscape(bucket) + r.URL.EscapedPath()
			r2.URL = &u
			r2.Body = r.Body
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// bucketFromHost returns the bucket a Host header names under one of
// domains, or "" for a path-style request. It is the rule the verifier
// uses to sign the Signature Version 2 resource, so both agree.
func bucketFromHost(host string, domains []string) string {
	return sigv4.BucketFromHost(host, domains)
}
