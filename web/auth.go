package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Credentials are the S3 keys that open the page.
type Credentials struct {
	AccessKey, SecretKey string
}

const (
	sessionCookie = "tessera_session"
	// sessionVersion is mixed into the MAC so a future cookie format never
	// verifies against this one.
	sessionVersion = "tessera-web-session-v1"
)

var errBadSession = errors.New("web: bad session cookie")

// sessions issues and checks login cookies. A cookie is
// base64url(expiry unix seconds, big-endian 8 bytes || HMAC-SHA256 tag):
// it carries no secret, and its key is derived from the S3 credentials, so
// changing them logs everyone out and every gateway sharing them accepts
// the same cookie.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newSessions(c Credentials, ttl time.Duration) *sessions {
	m := hmac.New(sha256.New, []byte(c.SecretKey))
	m.Write([]byte(sessionVersion + "\x00" + c.AccessKey))
	return &sessions{key: m.Sum(nil), ttl: ttl, now: time.Now}
}

func (s *sessions) tag(exp []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(exp)
	return m.Sum(nil)
}

// issue returns a cookie value valid for the session lifetime.
func (s *sessions) issue() (string, time.Time) {
	exp := s.now().Add(s.ttl).Truncate(time.Second)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(exp.Unix()))
	return base64.RawURLEncoding.EncodeToString(append(b[:], s.tag(b[:])...)), exp
}

// check verifies a cookie value: well-formed, authentic and unexpired.
func (s *sessions) check(v string) error {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(v)
	if err != nil || len(raw) != 8+sha256.Size {
		return errBadSession
	}
	if !hmac.Equal(raw[8:], s.tag(raw[:8])) {
		return errBadSession
	}
	exp := int64(binary.BigEndian.Uint64(raw[:8]))
	if exp < 0 || !s.now().Before(time.Unix(exp, 0)) {
		return errBadSession
	}
	return nil
}

// basicChallenge asks a browser or client for the S3 keys.
const basicChallenge = `Basic realm="tessera", charset="UTF-8"`

// gate decides who may see the page and the JSON.
type gate struct {
	public bool
	creds  Credentials
	sess   *sessions
	// loginPage is the login form, the body of a page route's 401.
	loginPage []byte
}

// keysMatch compares both keys in constant time, whatever their lengths.
func (g *gate) keysMatch(ak, sk string) bool {
	a := sha256.Sum256([]byte(ak))
	b := sha256.Sum256([]byte(g.creds.AccessKey))
	c := sha256.Sum256([]byte(sk))
	d := sha256.Sum256([]byte(g.creds.SecretKey))
	ok := subtle.ConstantTimeCompare(a[:], b[:]) & subtle.ConstantTimeCompare(c[:], d[:])
	return ok == 1 && g.creds.AccessKey != "" && g.creds.SecretKey != ""
}

// allowed reports whether r carries a valid session or basic credentials.
func (g *gate) allowed(r *http.Request) bool {
	if g.public || g.session(r) {
		return true
	}
	if ak, sk, ok := r.BasicAuth(); ok && g.keysMatch(ak, sk) {
		return true
	}
	return false
}

// session reports whether r carries a valid login cookie: the one way
// in that Sign out can end (a browser keeps basic credentials until it
// closes, and a public page has nothing to end).
func (g *gate) session(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && g.sess.check(c.Value) == nil
}

// admin guards a route that exposes the process itself (profiles): it
// needs the credentials even when the status page is public.
func (g *gate) admin(next http.Handler) http.Handler {
	strict := &gate{creds: g.creds, sess: g.sess, loginPage: g.loginPage}
	return strict.api(next)
}

// page guards a human-facing route. A stranger gets 401 with a Basic
// challenge, so a browser opening http://KEY:SECRET@host:9001/ sends
// those keys (browsers send a URL's credentials only when challenged),
// and the login form as the body, which a browser shows once its own
// prompt is dismissed.
func (g *gate) page(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowed(r) {
			h := w.Header()
			h.Set("WWW-Authenticate", basicChallenge)
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(g.loginPage)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// api guards a script-facing route: strangers get 401 with a Basic
// challenge.
func (g *gate) api(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowed(r) {
			w.Header().Set("WWW-Authenticate", basicChallenge)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// login checks the form and sets the session cookie. A failed login sends
// the form back with an error flag and never echoes what was typed.
func (g *gate) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	if !g.keysMatch(r.PostForm.Get("access_key"), r.PostForm.Get("secret_key")) {
		http.Redirect(w, r, "/login?failed=1", http.StatusSeeOther)
		return
	}
	v, exp := g.sess.issue()
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: v, Path: "/", Expires: exp, MaxAge: int(g.sess.ttl.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (g *gate) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// bearer guards /metrics with a static token when one is configured.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		h := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tessera metrics"`)
			http.Error(w, "bearer token required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
