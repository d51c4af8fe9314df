package gateway

import (
	"net/http"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog/hlog"
)

// handlerFunc is a handler that renders its own success and returns its
// failure; adapt turns the failure into an S3 error response.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// unimplemented lists S3 sub-resources tessera recognises but does not
// serve. A request naming one gets 501 NotImplemented instead of being
// mistaken for the plain operation on the same path (GET /b?acl is not a
// listing). Routes registered before the catch-all take precedence.
var unimplemented = []string{
	"accelerate", "acl", "analytics", "cors", "encryption",
	"intelligent-tiering", "inventory", "legal-hold", "lifecycle", "logging",
	"metadataConfiguration", "metadataTable", "metrics", "notification",
	"object-lock", "ownershipControls", "policy", "policyStatus",
	"publicAccessBlock", "replication", "requestPayment", "restore",
	"retention", "select", "session", "tagging", "torrent", "uploads",
	"versioning", "versions", "website",
}

// route is one row of a dispatch table: a method (empty for any), query
// parameters that must be present, a header that must be present, whether
// any unimplemented sub-resource must be present, and the handler.
type route struct {
	method        string
	queries       []string
	header        string
	unimplemented bool
	h             handlerFunc
}

func (g *gateway) bucketRoutes() []route {
	return []route{
		{method: http.MethodOptions, h: g.preflight},
		{method: http.MethodPut, queries: []string{"cors"}, h: g.putBucketCors},
		{method: http.MethodGet, queries: []string{"cors"}, h: g.getBucketCors},
		{method: http.MethodDelete, queries: []string{"cors"}, h: g.deleteBucketCors},
		{method: http.MethodPut, queries: []string{"tagging"}, h: g.putBucketTagging},
		{method: http.MethodGet, queries: []string{"tagging"}, h: g.getBucketTagging},
		{method: http.MethodDelete, queries: []string{"tagging"}, h: g.deleteBucketTagging},
		{method: http.MethodPut, queries: []string{"lifecycle"}, h: g.putBucketLifecycle},
		{method: http.MethodGet, queries: []string{"lifecycle"}, h: g.getBucketLifecycle},
		{method: http.MethodDelete, queries: []string{"lifecycle"}, h: g.deleteBucketLifecycle},
		{method: http.MethodGet, queries: []string{"location"}, h: g.getBucketLocation},
		{method: http.MethodPut, queries: []string{"object-lock"}, h: g.putObjectLockConfig},
		{method: http.MethodGet, queries: []string{"object-lock"}, h: g.getObjectLockConfig},
		{method: http.MethodPut, queries: []string{"versioning"}, h: g.putBucketVersioning},
		{method: http.MethodGet, queries: []string{"versioning"}, h: g.getBucketVersioning},
		{method: http.MethodPost, queries: []string{"delete"}, h: g.deleteObjects},
		{method: http.MethodGet, queries: []string{"uploads"}, h: g.listMultipartUploads},
		{method: http.MethodGet, queries: []string{"versions"}, h: g.listObjectVersions},
		{unimplemented: true, h: notImplemented},
		{method: http.MethodGet, queries: []string{"list-type"}, h: g.listObjectsV2},
		{method: http.MethodGet, h: g.listObjectsV1},
		{method: http.MethodPut, h: g.createBucket},
		{method: http.MethodHead, h: g.headBucket},
		{method: http.MethodDelete, h: g.deleteBucket},
		// Browser POST uploads (POST policy) are not supported.
		{method: http.MethodPost, h: notImplemented},
	}
}

func (g *gateway) objectRoutes() []route {
	return []route{
		{method: http.MethodOptions, h: g.preflight},
		{method: http.MethodPut, queries: []string{"partNumber", "uploadId"}, header: "X-Amz-Copy-Source", h: g.uploadPartCopy},
		{method: http.MethodPut, queries: []string{"partNumber", "uploadId"}, h: g.uploadPart},
		{method: http.MethodPost, queries: []string{"uploads"}, h: g.createMultipart},
		{method: http.MethodPost, queries: []string{"uploadId"}, h: g.completeMultipart},
		{method: http.MethodDelete, queries: []string{"uploadId"}, h: g.abortMultipart},
		{method: http.MethodGet, queries: []string{"uploadId"}, h: g.listParts},
		{method: http.MethodGet, queries: []string{"tagging"}, h: g.getObjectTagging},
		{method: http.MethodGet, queries: []string{"attributes"}, h: g.getObjectAttributes},
		{method: http.MethodPut, queries: []string{"tagging"}, h: g.putObjectTagging},
		{method: http.MethodDelete, queries: []string{"tagging"}, h: g.deleteObjectTagging},
		{method: http.MethodPut, queries: []string{"retention"}, h: g.putObjectRetention},
		{method: http.MethodGet, queries: []string{"retention"}, h: g.getObjectRetention},
		{method: http.MethodPut, queries: []string{"legal-hold"}, h: g.putObjectLegalHold},
		{method: http.MethodGet, queries: []string{"legal-hold"}, h: g.getObjectLegalHold},
		{unimplemented: true, h: notImplemented},
		{method: http.MethodPut, header: "X-Amz-Copy-Source", h: g.copyObject},
		{method: http.MethodPut, h: g.putObject},
		{method: http.MethodGet, h: g.getObject},
		{method: http.MethodHead, h: g.headObject},
		{method: http.MethodDelete, h: g.deleteObject},
	}
}

// router builds the mux. It matches on the escaped path and never cleans
// it, so keys containing "..", "//" or "%2F" reach the handlers intact and
// are decoded exactly once there.
func (g *gateway) router() http.Handler {
	m := mux.NewRouter().UseEncodedPath().SkipClean(true)
	// Only paths with an empty bucket segment ("//key") match nothing.
	m.NotFoundHandler = adapt(func(http.ResponseWriter, *http.Request) error { return apiErr(errInvalidBucketName) })
	m.MethodNotAllowedHandler = adapt(func(http.ResponseWriter, *http.Request) error { return apiErr(errMethodNotAllowed) })

	m.Path("/").Methods(http.MethodGet).Handler(adapt(g.listBuckets))
	g.adminRoutes(m)
	register(m, "/{bucket:[^/]+}/{key:.+}", g.objectRoutes())
	register(m, "/{bucket:[^/]+}{slash:/?}", g.bucketRoutes())
	return m
}

func register(m *mux.Router, path string, routes []route) {
	for _, rt := range routes {
		r := m.Path(path)
		if rt.method != "" {
			r = r.Methods(rt.method)
		}
		for _, q := range rt.queries {
			r = r.MatcherFunc(hasQuery(q))
		}
		if rt.unimplemented {
			r = r.MatcherFunc(hasUnimplemented)
		}
		if rt.header != "" {
			r = r.HeadersRegexp(rt.header, "")
		}
		r.Handler(adapt(rt.h))
	}
}

func hasQuery(name string) mux.MatcherFunc {
	return func(r *http.Request, _ *mux.RouteMatch) bool { return r.URL.Query().Has(name) }
}

func hasUnimplemented(r *http.Request, _ *mux.RouteMatch) bool {
	q := r.URL.Query()
	for _, name := range unimplemented {
		if q.Has(name) {
			return true
		}
	}
	return false
}

func notImplemented(http.ResponseWriter, *http.Request) error {
	return apiErr(errNotImplemented)
}

// adapt runs h and renders its error. An error after the response header
// went out cannot be reported in-band (a GET body failing mid-stream): the
// connection is aborted so the client never takes a short body as whole.
func adapt(h handlerFunc) http.Handler {
	op := operationName(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setOperation(r, op)
		sw := &startedWriter{ResponseWriter: w}
		err := h(sw, r)
		if err == nil {
			return
		}
		if sw.started {
			ev := hlog.FromRequest(r).Error()
			if sw.clientGone(r) {
				ev = hlog.FromRequest(r).Debug()
			}
			ev.Err(err).Msg("response failed after it started; aborting connection")
			panic(http.ErrAbortHandler)
		}
		writeError(sw, r, err)
	})
}

// startedWriter records whether the response header has been sent, and
// whether writing the response to the client failed.
type startedWriter struct {
	http.ResponseWriter
	started  bool
	writeErr error
}

// clientGone reports whether a response failed because the client went
// away: a write to it failed (a broken pipe, a reset) or it cancelled the
// request. That is the client's doing, as when a load generator stops
// mid-GET, and no error line: only the server's own failures are.
func (w *startedWriter) clientGone(r *http.Request) bool {
	return w.writeErr != nil || r.Context().Err() != nil
}

func (w *startedWriter) WriteHeader(status int) {
	w.started = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.started = true
	n, err := w.ResponseWriter.Write(p)
	if err != nil && w.writeErr == nil {
		w.writeErr = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
