// Package web serves the operator's view of a node on --web-address: a
// live status page (static files embedded in the binary, no build step and
// no network at run time), the JSON it draws from (/api/status),
// Prometheus metrics (/metrics) and liveness and readiness probes
// (/health/live, /health/ready).
//
// It reads the rest of the system only through the Source interface and a
// prometheus.Gatherer, so it never blocks the data path; a background
// goroutine samples Source every couple of seconds to keep chart history,
// stopped by Server.Close.
//
// Access: the page and /api/status need the S3 credentials, as a login
// form setting an HMAC-signed, HttpOnly, SameSite=Strict, expiring session
// cookie, or as HTTP basic auth (access key, secret key), unless
// Config.Public. /health/* is always open; /metrics is open unless a bearer
// token is configured. No response ever carries a secret: the cookie is a
// MAC over its expiry, and failed logins are not echoed.
package web
