package gateway

import (
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
)

// Authenticator verifies a request's signature and hands back the body to
// read in its place. *sigv4.Verifier implements it. Verify must be safe for
// concurrent use.
type Authenticator interface {
	Verify(r *http.Request) (*sigv4.Result, error)
}

// Config configures the S3 front end.
type Config struct {
	// Backend is the object layer. Required.
	Backend Backend
	// Auth authenticates every request before routing. Required.
	Auth Authenticator
	// Region is reported by GetBucketLocation and HeadBucket and is the only
	// LocationConstraint CreateBucket accepts. Default DefaultRegion.
	Region string
	// Logger receives access and error logs (component "gateway").
	Logger zerolog.Logger
	// MaxBodySize caps XML request bodies (CompleteMultipartUpload,
	// DeleteObjects, CreateBucketConfiguration); larger ones fail with
	// MaxMessageLengthExceeded. Object bodies are bounded by S3's limits
	// instead (object.MaxPutSize, object.MaxPartSize). Default
	// DefaultMaxBodySize.
	MaxBodySize int64
	// Domains enable virtual-hosted-style requests: a Host of
	// BUCKET.DOMAIN addresses BUCKET. Empty: path style only.
	Domains []string
	// Admin, when set, serves the admin API under AdminPrefix.
	Admin Admin
	// AccessLog logs every request's access line at info level; off, the
	// lines are debug, so a busy gateway's log keeps to lifecycle news.
	AccessLog bool
}

// Defaults applied by New to zero Config fields.
const (
	DefaultRegion      = "us-east-1"
	DefaultMaxBodySize = 4 << 20
)

// gateway holds what the handlers share; it is immutable after New.
type gateway struct {
	be      Backend
	auth    Authenticator
	region  string
	maxBody int64
	domains []string
	admin   Admin
	cors    *corsCache
	// versioning caches each bucket's versioning and object lock
	// settings, which every write reads.
	versioning *ttlCache[bucketSettings]
	// access is the level of the per-request access lines.
	access zerolog.Level
}

// New returns the S3 HTTP handler: path-style routes over cfg.Backend,
// every request authenticated by cfg.Auth. The handler is safe for
// concurrent use and starts no goroutines of its own beyond those of a
// DeleteObjects request, which end before it returns.
func New(cfg Config) (http.Handler, error) {
	if cfg.Backend == nil {
		return nil, errors.New("gateway: Config.Backend is nil")
	}
	if cfg.Auth == nil {
		return nil, errors.New("gateway: Config.Auth is nil")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = DefaultMaxBodySize
	}
	g := &gateway{be: cfg.Backend, auth: cfg.Auth, region: cfg.Region, maxBody: cfg.MaxBodySize, domains: cfg.Domains,
		admin: cfg.Admin, cors: newCORSCache(), versioning: newTTLCache[bucketSettings](versioningCacheTTL), access: zerolog.DebugLevel}
	if cfg.AccessLog {
		g.access = zerolog.InfoLevel
	}
	log := cfg.Logger.With().Str("component", "gateway").Logger()
	return g.middleware(log, g.router()), nil
}
