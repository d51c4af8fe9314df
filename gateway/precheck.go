package gateway

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// S3 rejects a method and sub-resource combination that names no
// operation before it looks at credentials: a client gets the 400 or 405
// that says what is wrong with its request, not a 403 for a signature it
// may not have had a reason to send. precheck makes those answers.

// Resource types S3 names in a MethodNotAllowed body.
const (
	resourceService = "SERVICE"
	resourceBucket  = "BUCKET"
	resourceObject  = "OBJECT"
	resourceUpload  = "UPLOAD"
)

// precheck returns the error S3 answers r with whatever its credentials,
// or nil when r names an operation (which may still fail later).
func (g *gateway) precheck(r *http.Request) error {
	if r.Method == http.MethodOptions || strings.HasPrefix(r.URL.Path, AdminPrefix) {
		return nil // the admin API is not S3: its routes check their own methods
	}
	if headerBytes(r.Header) > maxHeaderBytes {
		return withFields(apiErr(errRequestHeaderSectionTooLarge), errorField{"MaxSizeAllowed", strconv.Itoa(maxHeaderBytes)})
	}
	service, hasKey := g.pathShape(r)
	q := r.URL.Query()
	copySource := r.Header.Get("X-Amz-Copy-Source")
	switch {
	case service && r.Method != http.MethodGet && r.Method != http.MethodHead:
		return methodNotAllowed(r.Method, resourceService)
	case copySource != "" && r.Method != http.MethodPut && (r.Method != http.MethodPost || q.Has("uploadId")):
		return withFields(apiErrf(errInvalidArgument, "You can only specify a copy source header for copy requests."),
			errorField{"ArgumentName", "x-amz-copy-source"}, errorField{"ArgumentValue", copySource})
	case !hasKey:
		return nil
	case r.Method == http.MethodGet && q.Has("uploads"):
		return apiErrf(errInvalidRequest, "Key is not expected for the GET method ?uploads subresource")
	case r.Method == http.MethodGet && q.Has("versions"):
		return apiErrf(errInvalidRequest, "There is no such thing as the ?versions sub-resource for a key")
	case r.Method == http.MethodPut && q.Has("partNumber") && !q.Has("uploadId"):
		return withFields(apiErrf(errInvalidArgument, "This operation does not accept partNumber without uploadId"),
			errorField{"ArgumentName", "partNumber"}, errorField{"ArgumentValue", "partNumber"})
	case r.Method == http.MethodPut && q.Has("uploadId") && !q.Has("partNumber"):
		return withAllow(methodNotAllowed(r.Method, resourceUpload), "DELETE, POST, GET")
	case r.Method == http.MethodPost && !postsToObject(q):
		return methodNotAllowed(r.Method, resourceService)
	}
	return nil
}

// maxHeaderBytes is S3's bound on a request's header section.
const maxHeaderBytes = 8 << 10

// headerBytes is the size of h as sent: "Name: value\r\n" per value.
func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// postsToObject reports whether a POST on a key names an operation.
func postsToObject(q url.Values) bool {
	for _, sub := range []string{"uploads", "uploadId", "restore", "select", "renameObject"} {
		if q.Has(sub) {
			return true
		}
	}
	return false
}

// pathShape reports whether a request addresses the service (no bucket)
// and whether it names a key, path style or virtual-hosted.
func (g *gateway) pathShape(r *http.Request) (service, hasKey bool) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	if bucketFromHost(r.Host, g.domains) != "" {
		return false, path != ""
	}
	_, key, _ := strings.Cut(path, "/")
	return path == "", key != ""
}

func methodNotAllowed(method, resource string) error {
	return withFields(apiErr(errMethodNotAllowed), errorField{"Method", method}, errorField{"ResourceType", resource})
}

// withAllow adds the methods a resource allows, for the Allow header.
func withAllow(err error, allow string) error {
	if se, ok := err.(*s3Error); ok {
		out := *se
		out.allow = allow
		return &out
	}
	return err
}
