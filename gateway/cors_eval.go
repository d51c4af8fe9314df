package gateway

import (
	"net/http"
	"strconv"
	"strings"
)

// corsVary is the Vary S3 sends with every CORS answer: the answer depends
// on all three request headers, so caches must key on them.
const corsVary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// corsRequest is what a CORS configuration is evaluated against. S3 reads
// Access-Control-Request-Method and -Headers on actual requests too, not
// only on preflights: method is that header when sent, else the request's
// own method (OPTIONS on a preflight without it, which no rule allows).
type corsRequest struct {
	origin  string
	method  string
	headers []string // lowercase
}

// parseCORSRequest reads r's CORS headers. An unknown requested method or
// a requested header name that is not a token is a 400 BadRequest.
func parseCORSRequest(r *http.Request) (corsRequest, error) {
	cr := corsRequest{origin: r.Header.Get("Origin"), method: r.Method}
	if m, sent := r.Header["Access-Control-Request-Method"]; sent {
		cr.method = strings.Join(m, ",")
		if !corsMethods[cr.method] {
			return cr, apiErrf(errBadRequest, "Invalid Access-Control-Request-Method: %s", cr.method)
		}
	}
	hs, err := requestHeaders(r.Header.Values("Access-Control-Request-Headers"))
	cr.headers = hs
	return cr, err
}

// requestHeaders splits Access-Control-Request-Headers into lowercase
// names. Elements are trimmed of optional whitespace and empty ones
// skipped (RFC 9110 section 5.6.1); an invalid name is reported as it
// stood between the commas.
func requestHeaders(v []string) ([]string, error) {
	var out []string
	for _, line := range v {
		for _, raw := range strings.Split(line, ",") {
			h := strings.Trim(raw, " \t")
			if h == "" {
				continue
			}
			if !isToken(h) {
				return nil, apiErrf(errBadRequest, `Access-Control-Request-Headers "%s" contains invalid character.`, raw)
			}
			out = append(out, strings.ToLower(h))
		}
	}
	return out, nil
}

// wildMatch matches s against a pattern with at most one "*" standing for
// any run of characters.
func wildMatch(pattern, s string) bool {
	before, after, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	return len(s) >= len(before)+len(after) && strings.HasPrefix(s, before) && strings.HasSuffix(s, after)
}

// match returns the first rule allowing the request's origin, method and
// every requested header (header names compare case-insensitively,
// origins and methods exactly), nil when none does.
func (c *corsConfig) match(cr corsRequest) *corsRule {
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.allowsOrigin(cr.origin) && r.allowsMethod(cr.method) && r.allowsHeaders(cr.headers) {
			return r
		}
	}
	return nil
}

func (r *corsRule) allowsOrigin(origin string) bool {
	for _, o := range r.AllowedOrigins {
		if wildMatch(o, origin) {
			return true
		}
	}
	return false
}

func (r *corsRule) allowsMethod(method string) bool {
	for _, m := range r.AllowedMethods {
		if m == method {
			return true
		}
	}
	return false
}

func (r *corsRule) allowsHeaders(headers []string) bool {
	for _, h := range headers {
		ok := false
		for _, a := range r.AllowedHeaders {
			if wildMatch(strings.ToLower(a), h) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (r *corsRule) anyOrigin() bool {
	for _, o := range r.AllowedOrigins {
		if o == "*" {
			return true
		}
	}
	return false
}

// setHeaders writes S3's answer to a request rule allows, preflight or
// actual: a rule open to every origin answers "*" and no
// Access-Control-Allow-Credentials, a named origin is echoed with
// credentials allowed; then the rule's methods, the requested headers,
// the exposed headers and the max age as configured. S3 exposes only the
// headers a rule lists (no implicit ETag).
func (r *corsRule) setHeaders(h http.Header, cr corsRequest) {
	if r.anyOrigin() {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", cr.origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(r.AllowedMethods, ", "))
	if len(cr.headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(cr.headers, ", "))
	}
	if len(r.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(r.ExposeHeaders, ", "))
	}
	if r.MaxAgeSeconds != nil {
		h.Set("Access-Control-Max-Age", strconv.Itoa(*r.MaxAgeSeconds))
	}
	h.Add("Vary", corsVary)
}
