package web

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"
)

//go:embed static
var staticFS embed.FS

// publicAssets are the files the login form needs; every other file is
// behind the login like the page itself.
var publicAssets = map[string]bool{"style.css": true, "login.js": true}

// Source is what the web server reads. Both methods must be fast and must
// not block on peers.
type Source interface {
	Status() Status
	// Ready returns nil when the node can serve reads and writes at its
	// default code.
	Ready() error
}

// Config configures the web server.
type Config struct {
	Source Source
	Logger zerolog.Logger
	// Credentials open the page and /api/status (login form or HTTP basic
	// auth). Required unless Public.
	Credentials Credentials
	// Public serves the page and /api/status without authentication.
	Public bool
	// MetricsToken, when set, is the bearer token /metrics requires.
	MetricsToken string
	// Metrics is what /metrics exposes; nil serves 404 there.
	Metrics prometheus.Gatherer
	// Errors is shown as the page's recent errors; nil shows none.
	Errors *ErrorLog
	// SampleEvery and HistoryLen size the chart history (defaults 2 s and
	// 150 samples, five minutes).
	SampleEvery time.Duration
	HistoryLen  int
	// SessionTTL is how long a login lasts (default 12 h).
	SessionTTL time.Duration
}

// Server is the web handler plus the goroutine sampling chart history.
type Server struct {
	cfg  Config
	gate *gate
	h    http.Handler
	rec  *recorder
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// New starts sampling and returns the server; Close stops it.
func New(cfg Config) (*Server, error) {
	if cfg.Source == nil {
		return nil, errors.New("web: Config.Source is nil")
	}
	if !cfg.Public && (cfg.Credentials.AccessKey == "" || cfg.Credentials.SecretKey == "") {
		return nil, errors.New("web: credentials are required unless the page is public")
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 2 * time.Second
	}
	if cfg.HistoryLen <= 0 {
		cfg.HistoryLen = 150
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	s := &Server{cfg: cfg, rec: newRecorder(cfg.HistoryLen, cfg.SampleEvery), stop: make(chan struct{})}
	h, err := s.routes()
	if err != nil {
		return nil, err
	}
	s.h = hlog.NewHandler(cfg.Logger.With().Str("component", "web").Logger())(h)
	s.rec.add(cfg.Source.Status())
	s.wg.Add(1)
	go s.sample()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// Close stops the sampler. It does not close listeners it never opened.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
	return nil
}

func (s *Server) sample() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.SampleEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.rec.add(s.cfg.Source.Status())
		}
	}
}

func (s *Server) routes() (http.Handler, error) {
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	login, err := fs.ReadFile(static, "login.html")
	if err != nil {
		return nil, err
	}
	g := &gate{public: s.cfg.Public, creds: s.cfg.Credentials, sess: newSessions(s.cfg.Credentials, s.cfg.SessionTTL),
		loginPage: login}
	s.gate = g
	files := http.FileServerFS(static)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health/live", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /health/ready", s.ready)
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", bearer(s.cfg.MetricsToken,
			promhttp.HandlerFor(s.cfg.Metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})))
	}
	mux.Handle("GET /api/status", g.api(http.HandlerFunc(s.status)))
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		if g.public {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		serveFile(w, r, static, "login.html")
	})
	profiles(mux, g)
	mux.HandleFunc("POST /login", g.login)
	mux.HandleFunc("POST /logout", g.logout)
	mux.Handle("GET /{$}", g.page(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveFile(w, r, static, "index.html")
	})))
	assets := http.StripPrefix("/static/", files)
	gated := g.page(assets)
	mux.HandleFunc("GET /static/", func(w http.ResponseWriter, r *http.Request) {
		if publicAssets[strings.TrimPrefix(r.URL.Path, "/static/")] {
			assets.ServeHTTP(w, r)
			return
		}
		gated.ServeHTTP(w, r)
	})
	return securityHeaders(mux), nil
}

func serveFile(w http.ResponseWriter, r *http.Request, fsys fs.FS, name string) {
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, fsys, name)
}

// securityHeaders keeps the page from being framed or loading anything
// from elsewhere: everything it needs is embedded.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	if err := s.cfg.Source.Ready(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ready\n"))
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st := s.cfg.Source.Status()
	st.Errors = s.cfg.Errors.Recent()
	st.Session = !s.gate.public && s.gate.session(r)
	if r.URL.Query().Get("history") == "1" {
		st.History = s.rec.snapshot()
	}
	if st.Nodes == nil {
		st.Nodes = []Node{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(st)
}
