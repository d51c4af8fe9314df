package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"

	"tessera/gateway/sigv4"
)

// middleware wraps the router, outermost first: request logger, request id
// (x-amz-request-id), access log, panic logging, common headers, CORS
// headers, authentication.
func (g *gateway) middleware(log zerolog.Logger, next http.Handler) http.Handler {
	h := g.authenticate(g.virtualHost(next))
	h = g.corsActual(h)
	h = commonHeaders(h)
	h = recoverer(h)
	h = hlog.AccessHandler(g.accessLog)(h)
	h = hlog.RequestIDHandler("req_id", "X-Amz-Request-Id")(h)
	return hlog.NewHandler(log)(h)
}

// accessLog records one line per request, at g.access. Every handler
// writes its status explicitly, so status 0 means the connection was
// aborted before a response started.
func (g *gateway) accessLog(r *http.Request, status, size int, dur time.Duration) {
	hlog.FromRequest(r).WithLevel(g.access).
		Str("method", r.Method).
		Str("path", r.URL.EscapedPath()).
		Int("status", status).
		Int("bytes", size).
		Dur("dur", dur).
		Msg("request")
}

// commonHeaders sets the headers S3 puts on every response.
func commonHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Server", "tessera")
		if id, ok := hlog.IDFromRequest(r); ok {
			h.Set("X-Amz-Id-2", base64.StdEncoding.EncodeToString(id.Bytes()))
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer logs a handler panic with its stack through the request logger,
// then aborts the connection: the response may have started, so a clean
// error cannot be guaranteed.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p != http.ErrAbortHandler {
				hlog.FromRequest(r).Error().Interface("panic", p).Bytes("stack", debug.Stack()).Msg("handler panic")
			}
			panic(http.ErrAbortHandler)
		}()
		next.ServeHTTP(w, r)
	})
}

type resultKey struct{}

// authenticate runs the Authenticator before routing; its Body replaces
// r.Body so every handler reads verified bytes, and a failed signature or
// checksum surfaces as the final Read's error.
func (g *gateway) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bucket, ok := g.isPostForm(r); ok {
			// Authenticated by its policy signature inside postObject.
			adapt(func(w http.ResponseWriter, r *http.Request) error { return g.postObject(w, r, bucket) }).ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodOptions {
			// CORS preflight: browsers send it without credentials, and
			// the only routes for OPTIONS are the preflight handlers.
			next.ServeHTTP(w, r)
			return
		}
		if err := g.precheck(r); err != nil {
			writeError(w, r, err)
			return
		}
		res, err := g.auth.Verify(r)
		if err == nil {
			err = g.checkStreamingUse(r)
		}
		if errors.Is(err, sigv4.ErrMissingAuth) {
			err = g.anonymousRefusal(r)
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		if res == nil {
			res = &sigv4.Result{Body: r.Body, Size: r.ContentLength}
		}
		if res.Body != nil {
			r.Body = res.Body
		}
		r = r.WithContext(context.WithValue(r.Context(), resultKey{}, res))
		if err := g.checkExpectedOwner(r); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authResult returns the request's verification result; authenticate
// always stores one.
func authResult(r *http.Request) *sigv4.Result {
	if res, ok := r.Context().Value(resultKey{}).(*sigv4.Result); ok {
		return res
	}
	return &sigv4.Result{Body: r.Body, Size: r.ContentLength}
}
