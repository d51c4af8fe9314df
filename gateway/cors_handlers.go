package gateway

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"tessera/object"
)

// corsStore is the optional Backend part behind the ?cors sub-resource;
// *object.Layer implements it. A Backend without it answers 501 to ?cors
// and treats every bucket as having no CORS configuration.
type corsStore interface {
	PutBucketConfig(ctx context.Context, bucket, name string, data []byte) error
	GetBucketConfig(ctx context.Context, bucket, name string) ([]byte, error)
}

const corsConfigName = "cors"

// corsTarget is the bucket of a ?cors request and the backend's config
// store; backends without one answer NotImplemented.
func (g *gateway) corsTarget(r *http.Request) (string, corsStore, error) {
	bucket, err := bucketParam(r)
	if err != nil {
		return "", nil, err
	}
	cs, ok := g.be.(corsStore)
	if !ok {
		return "", nil, apiErr(errNotImplemented)
	}
	return bucket, cs, nil
}

func (g *gateway) putBucketCors(w http.ResponseWriter, r *http.Request) error {
	bucket, cs, err := g.corsTarget(r)
	if err != nil {
		return err
	}
	body, err := g.readBody(w, r)
	if err != nil {
		return err
	}
	cfg, err := parseCORS(body)
	if err != nil {
		return err
	}
	data, err := xml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := cs.PutBucketConfig(r.Context(), bucket, corsConfigName, data); err != nil {
		return err
	}
	g.cors.forget(bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) getBucketCors(w http.ResponseWriter, r *http.Request) error {
	bucket, cs, err := g.corsTarget(r)
	if err != nil {
		return err
	}
	data, err := cs.GetBucketConfig(r.Context(), bucket, corsConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return apiErr(errNoSuchCORSConfiguration)
	}
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
	bucket, cs, err := g.corsTarget(r)
	if err != nil {
		return err
	}
	if err := cs.PutBucketConfig(r.Context(), bucket, corsConfigName, nil); err != nil {
		return err
	}
	g.cors.forget(bucket)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// preflight answers a browser's OPTIONS request. It runs unauthenticated:
// browsers send no credentials on a preflight.
func (g *gateway) preflight(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return apiErr(errBadRequest)
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if !corsMethods[method] {
		return apiErrf(errBadRequest, "Invalid Access-Control-Request-Method: %s", method)
	}
	cfg, err := g.cors.get(r.Context(), g.be, bucket)
	if err != nil {
		return err
	}
	if cfg == nil {
		return apiErr(errCORSNotEnabled)
	}
	headers := requestHeaders(r.Header.Values("Access-Control-Request-Headers"))
	rule := cfg.match(origin, method, headers)
	if rule == nil {
		return apiErr(errCORSNotAllowed)
	}
	h := w.Header()
	h.Add("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
	rule.setPreflight(h, origin, headers)
	w.WriteHeader(http.StatusOK)
	return nil
}

// corsActual adds the CORS response headers to a non-preflight request
// whose Origin matches a rule of the bucket's configuration. It runs
// before authentication so that error answers carry them too (a browser
// hides the body of a cross-origin answer without them). Failures to read
// the configuration only leave the headers out.
func (g *gateway) corsActual(next http.Handler) http.Handler {
	if _, ok := g.be.(corsStore); !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		bucket := g.requestBucket(r)
		if bucket == "" {
			next.ServeHTTP(w, r)
			return
		}
		cfg, err := g.cors.get(r.Context(), g.be, bucket)
		if err == nil && cfg != nil {
			if rule := cfg.match(origin, r.Method, nil); rule != nil {
				w.Header().Add("Vary", "Origin")
				rule.setAllowOrigin(w.Header(), origin)
			}
		}
		next.ServeHTTP(w, r)
	})
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

// CORS configurations are read on every cross-origin request; the cache
// spares a peer fan-out per request. A change made through another
// gateway shows up here within corsCacheTTL.
const (
	corsCacheTTL = 5 * time.Second
	corsCacheMax = 4096
)

type corsEntry struct {
	cfg *corsConfig // nil: no configuration (or no bucket)
	at  time.Time
}

type corsCache struct {
	mu sync.Mutex
	m  map[string]corsEntry
}

func newCORSCache() *corsCache { return &corsCache{m: map[string]corsEntry{}} }

// get returns the bucket's configuration, nil when it has none or the
// bucket does not exist. Other failures are returned and not cached.
func (c *corsCache) get(ctx context.Context, be Backend, bucket string) (*corsConfig, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[bucket]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < corsCacheTTL {
		return e.cfg, nil
	}
	cs, ok := be.(corsStore)
	if !ok {
		return nil, nil
	}
	var cfg *corsConfig
	data, err := cs.GetBucketConfig(ctx, bucket, corsConfigName)
	switch {
	case errors.Is(err, object.ErrNoBucketConfig), errors.Is(err, object.ErrBucketNotFound):
	case err != nil:
		return nil, err
	default:
		if cfg, err = parseCORS(data); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if len(c.m) >= corsCacheMax {
		// Unknown bucket names cost an entry each; dropping everything
		// keeps the map bounded at the price of a few extra reads.
		clear(c.m)
	}
	c.m[bucket] = corsEntry{cfg: cfg, at: now}
	c.mu.Unlock()
	return cfg, nil
}

func (c *corsCache) forget(bucket string) {
	c.mu.Lock()
	delete(c.m, bucket)
	c.mu.Unlock()
}
