package gateway

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"tessera/object"
)

// configStore is the optional Backend part that keeps named bucket
// configurations, behind the ?cors and ?tagging sub-resources of a
// bucket; *object.Layer implements it. A Backend without it answers 501
// to them and treats every bucket as having no CORS configuration.
type configStore interface {
	PutBucketConfig(ctx context.Context, bucket, name string, data []byte) error
	GetBucketConfig(ctx context.Context, bucket, name string) ([]byte, error)
}

const corsConfigName = "cors"

// configTarget is the bucket of a bucket configuration request and the
// backend's config store; backends without one answer NotImplemented.
func (g *gateway) configTarget(r *http.Request) (string, configStore, error) {
	bucket, err := bucketParam(r)
	if err != nil {
		return "", nil, err
	}
	cs, ok := g.be.(configStore)
	if !ok {
		return "", nil, apiErr(errNotImplemented)
	}
	return bucket, cs, nil
}

// readBucketConfig returns the bucket's configuration name, answering
// missing (the sub-resource's own 404) when there is none.
func (g *gateway) readBucketConfig(r *http.Request, name string, missing errCode) ([]byte, error) {
	bucket, cs, err := g.configTarget(r)
	if err != nil {
		return nil, err
	}
	data, err := cs.GetBucketConfig(r.Context(), bucket, name)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return nil, apiErr(missing)
	}
	return data, err
}

// clearBucketConfig removes the bucket's configuration name and returns
// the bucket.
func (g *gateway) clearBucketConfig(r *http.Request, name string) (string, error) {
	bucket, cs, err := g.configTarget(r)
	if err != nil {
		return "", err
	}
	return bucket, cs.PutBucketConfig(r.Context(), bucket, name, nil)
}

// storeBucketConfig reads an XML configuration from the request body,
// checks it with parse and stores the parsed form as the bucket's
// configuration name, returning the bucket.
func (g *gateway) storeBucketConfig(w http.ResponseWriter, r *http.Request, name string, parse func([]byte) (any, error)) (string, error) {
	bucket, cs, err := g.configTarget(r)
	if err != nil {
		return "", err
	}
	body, err := g.readBody(w, r)
	if err != nil {
		return "", err
	}
	cfg, err := parse(body)
	if err != nil {
		return "", err
	}
	data, err := xml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	return bucket, cs.PutBucketConfig(r.Context(), bucket, name, data)
}

func (g *gateway) putBucketCors(w http.ResponseWriter, r *http.Request) error {
	bucket, err := g.storeBucketConfig(w, r, corsConfigName, func(b []byte) (any, error) { return parseCORS(b) })
	if err != nil {
		return err
	}
	g.cors.forget(bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getBucketCors(w http.ResponseWriter, r *http.Request) error {
	data, err := g.readBucketConfig(r, corsConfigName, errNoSuchCORSConfiguration)
	if err != nil {
		return err
	}
	cfg, err := parseCORS(data)
	if err != nil {
		return err
	}
	return writeXML(w, http.StatusOK, cfg)
}

func (g *gateway) deleteBucketCors(w http.ResponseWriter, r *http.Request) error {
	bucket, err := g.clearBucketConfig(r, corsConfigName)
	if err != nil {
		return err
	}
	g.cors.forget(bucket)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// msgCORSNoBucket is S3's refusal of a preflight to a bucket that does
// not exist: AccessForbidden, like the other refusals, not NoSuchBucket.
const msgCORSNoBucket = "CORSResponse: Bucket not found"

// preflight answers a browser's OPTIONS request. It runs unauthenticated:
// browsers send no credentials on a preflight. S3 checks the request's
// own headers first (400), then the bucket and its configuration (403).
func (g *gateway) preflight(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if r.Header.Get("Origin") == "" {
		return apiErr(errBadRequest)
	}
	cr, err := parseCORSRequest(r)
	if err != nil {
		return err
	}
	st, err := g.cors.get(r.Context(), g.be, bucket)
	if err != nil {
		return err
	}
	// S3 names the bucket as the resource when it has no rules to
	// evaluate, even for an object's URL.
	switch {
	case st.noBucket:
		return corsForbidden(apiErrf(errCORSNotEnabled, msgCORSNoBucket), cr.method, "BUCKET")
	case st.cfg == nil:
		return corsForbidden(apiErr(errCORSNotEnabled), cr.method, "BUCKET")
	}
	rule := st.cfg.match(cr)
	if rule == nil {
		resource := "BUCKET"
		if mux.Vars(r)["key"] != "" {
			resource = "OBJECT"
		}
		return corsForbidden(apiErr(errCORSNotAllowed), cr.method, resource)
	}
	rule.setHeaders(w.Header(), cr)
	w.WriteHeader(http.StatusOK)
	return nil
}

// corsForbidden adds to a preflight's refusal the fields S3 sends with
// it: the method asked for and the kind of resource.
func corsForbidden(err error, method, resource string) error {
	return withFields(err, errorField{"Method", method}, errorField{"ResourceType", resource})
}

// corsActual adds the CORS response headers to a non-preflight request
// whose CORS headers match a rule of the bucket's configuration. It runs
// before authentication so that error answers carry them too (a browser
// hides the body of a cross-origin answer without them). A request that
// matches no rule is served without CORS headers; one whose
// Access-Control-Request-* headers are malformed is refused, as a
// preflight would be. Failures to read the configuration only leave the
// headers out.
func (g *gateway) corsActual(next http.Handler) http.Handler {
	if _, ok := g.be.(configStore); !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.corsActualHeaders(w.Header(), r); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g *gateway) corsActualHeaders(h http.Header, r *http.Request) error {
	if r.Header.Get("Origin") == "" || r.Method == http.MethodOptions {
		return nil
	}
	bucket := g.requestBucket(r)
	if bucket == "" {
		return nil
	}
	st, err := g.cors.get(r.Context(), g.be, bucket)
	if err != nil || st.cfg == nil {
		return nil
	}
	cr, err := parseCORSRequest(r)
	if err != nil {
		return err
	}
	if rule := st.cfg.match(cr); rule != nil {
		rule.setHeaders(h, cr)
	}
	return nil
}

// requestBucket is the bucket a request addresses, virtual-hosted or path
// style; "" when none or invalid.
func (g *gateway) requestBucket(r *http.Request) string {
	bucket := bucketFromHost(r.Host, g.domains)
	if bucket == "" {
		seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
		b, err := url.PathUnescape(seg)
		if err != nil {
			return ""
		}
		bucket = b
	}
	if !validBucketName(bucket) {
		return ""
	}
	return bucket
}
