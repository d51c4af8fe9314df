package peer

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"

	"tessera/storage"
)

// ServerConfig configures the shard API server.
type ServerConfig struct {
	Store *storage.Store
	// Secret is the cluster secret. Empty rejects every request.
	Secret []byte
	Logger zerolog.Logger
	// MaxNonces bounds the replay cache (DefaultMaxNonces when 0).
	MaxNonces int
	// Now is the clock checked against request timestamps (time.Now when nil).
	Now func() time.Time
	// Drain, when set, serves POST /v1/admin/drain: decommission this peer.
	Drain func(context.Context) error
	// SendLimit paces shard streams (benchmarks emulating slower NICs).
	SendLimit SendLimit
	// Scrub, when set, serves GET and POST /v1/scrub.
	Scrub Scrubber
}

type server struct {
	onDrain func(context.Context) error
	scrub   Scrubber
	store   *storage.Store
	auth    *verifier
	log     zerolog.Logger
	pace    *sendPacer // nil: unlimited
}

// NewServer returns the shard API handler. Every request is authenticated
// before routing; see the package doc for routes and auth. The handler is
// safe for concurrent use and holds no goroutines.
func NewServer(cfg ServerConfig) http.Handler {
	if cfg.MaxNonces <= 0 {
		cfg.MaxNonces = DefaultMaxNonces
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &server{
		store: cfg.Store,
		auth: &verifier{key: deriveKey(cfg.Secret), now: cfg.Now,
			nonces: newNonceCache(2*MaxSkew+time.Second, cfg.MaxNonces)},
		log: cfg.Logger.With().Str("component", "peer").Logger(),
	}
	if cfg.SendLimit != (SendLimit{}) {
		s.pace = newSendPacer(cfg.SendLimit)
	}
	mux := http.NewServeMux()
	routes := []struct {
		pattern string
		h       func(http.ResponseWriter, *http.Request, *query) error
	}{
		{"GET " + pathBuckets, s.listBuckets},
		{"PUT " + pathBucket, s.makeBucket},
		{"GET " + pathBucket, s.statBucket},
		{"DELETE " + pathBucket, s.deleteBucket},
		{"PUT " + pathBucketConfig, s.putBucketConfig},
		{"GET " + pathBucketConfig, s.getBucketConfig},
		{"POST " + pathStage, s.stageShard},
		{"POST " + pathCommit, s.commit},
		{"POST " + pathRepair, s.repairCommit},
		{"POST " + pathRelabel, s.relabel},
		{"POST " + pathRewrite, s.rewrite},
		{"DELETE " + pathVersion, s.dropVersion},
		{"GET " + pathMeta, s.readMeta},
		{"GET " + pathVersions, s.readVersions},
		{"POST " + pathSettle, s.settle},
		{"GET " + pathShard, s.readShard},
		{"GET " + pathList, s.list},
		{"GET " + pathTombstones, s.listTombstones},
		{"POST " + pathTombstones, s.commitTombstones},
		{"GET " + pathUploads, s.listUploads},
		{"PUT " + pathUpload, s.putUpload},
		{"GET " + pathUpload, s.getUpload},
		{"DELETE " + pathUpload, s.abortUpload},
		{"POST " + pathPart, s.commitPart},
		{"POST " + pathComplete, s.completeUpload},
	}
	if cfg.Drain != nil {
		s.onDrain = cfg.Drain
		mux.Handle("POST "+pathDrain, s.handle(s.drain))
	}
	if cfg.Scrub != nil {
		s.scrub = cfg.Scrub
		mux.Handle("GET "+pathScrub, s.handle(s.scrubReport))
		mux.Handle("POST "+pathScrub, s.handle(s.scrubStart))
	}
	for _, rt := range routes {
		mux.Handle(rt.pattern, s.handle(rt.h))
	}
	var h http.Handler = s.authenticate(mux)
	h = hlog.AccessHandler(func(r *http.Request, status, size int, dur time.Duration) {
		hlog.FromRequest(r).Debug().Str("method", r.Method).Str("path", r.URL.Path).
			Int("status", status).Int("bytes", size).Dur("dur", dur).Msg("peer request")
	})(h)
	return hlog.NewHandler(s.log)(h)
}

// authenticate answers 401 (or 503 when the replay cache is full) before
// any routing, so unauthenticated requests learn nothing about routes.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.auth.verify(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// handle parses the query, runs h and renders its error. A handler that
// has started a response body handles its own errors and returns nil.
func (s *server) handle(h func(http.ResponseWriter, *http.Request, *query) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r.URL.RawQuery)
		if err == nil {
			err = h(w, r, q)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	// A write that ran out of space (a commit's record as much as a
	// shard) marks the store full, so readiness and gossip say so.
	s.store.NoteError(err)
	code, status := codeOf(err)
	ev := hlog.FromRequest(r).Debug()
	switch {
	case status == http.StatusUnauthorized:
		ev = hlog.FromRequest(r).Warn().Str("remote", r.RemoteAddr)
	case status >= 500:
		ev = hlog.FromRequest(r).Warn()
	}
	ev.Err(err).Str("code", code).Str("path", r.URL.Path).Msg("peer request failed")
	writeJSON(w, status, wireErrorOf(code, err))
}
