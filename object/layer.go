package object

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"tessera/erasure"
	"tessera/meta"
	"tessera/sched"
)

// Storage class names every layer knows.
const (
	ClassStandard = "STANDARD"
	ClassReduced  = "REDUCED_REDUNDANCY"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultBlockSize      = 1 << 20
	DefaultInlineLimit    = 128 << 10
	DefaultPeerTimeout    = 5 * time.Second
	DefaultBucketCacheTTL = 2 * time.Second
	DefaultSettleWait     = 2 * time.Second
	DefaultStallAfter     = time.Second
	DefaultStallHold      = 2 * time.Second
)

// Config configures a Layer. Zero fields take the defaults above.
type Config struct {
	Cluster Cluster
	// DefaultCode is the STANDARD storage class's code (4+2 when zero).
	DefaultCode meta.Code
	// Classes maps storage class names to codes. STANDARD is always
	// DefaultCode; REDUCED_REDUNDANCY defaults to (n-1)+1.
	Classes map[string]meta.Code
	// BlockSize is the erasure block size of new objects (1 MiB).
	BlockSize int
	// InlineLimit: objects of at most this many bytes live inside their
	// metadata records (128 KiB; negative disables inlining).
	InlineLimit int64
	// WriterID names this gateway in version stamps (random when empty).
	WriterID string
	Logger   zerolog.Logger
	// PeerTimeout is the longest any peer call may go without an answer
	// or a byte of progress: the ceiling of metadata call deadlines, which
	// otherwise follow each peer's observed latency.
	PeerTimeout time.Duration
	// StallAfter is how long a shard stream may make no progress while
	// the others of its operation do before that peer is given up for it,
	// and the floor of metadata call deadlines (DefaultStallAfter).
	StallAfter time.Duration
	// StallHold is how long a peer that stalled is left out of new
	// operations before one tries it again (DefaultStallHold).
	StallHold time.Duration
	// Alive, when set, reports whether gossip holds a peer alive; writes
	// leave one it does not out at once. Without it every peer counts as
	// alive until it stalls.
	Alive func(id meta.PeerID) bool
	// Now is the wall clock under version stamps and ModTime (time.Now);
	// stamps also advance past every stamp the layer observes (see hlc).
	Now func() time.Time
	// SettleWait bounds how long a read keeps asking again about a key
	// whose versions are in flux (an overwrite landing on its peers as the
	// records are read) before it fails with ErrQuorum.
	SettleWait time.Duration
	// BucketCacheTTL is how long a positive bucket check is trusted.
	BucketCacheTTL time.Duration
	// MinPartSize is the smallest non-last multipart part (MinPartSize).
	MinPartSize int64
	// Repair, when set, is called for every object found degraded. It must
	// not block.
	Repair func(RepairItem)
	// Pool runs every shard fetch of every GET (inlined objects' included)
	// under its scheduling policy, in a bounded pool. Nil gives the layer
	// a pool of its own under the default policy.
	Pool *FetchPool
	// FetchWindow is the largest shard range one pooled fetch downloads
	// (MaxPooledShard); larger reads go through the pool window by window.
	FetchWindow int64
	// WindowMemory bounds the bytes of chunk buffers all GETs hold at
	// once (DefaultWindowMemory): a GET's window waits for room, and a
	// read-ahead window is only fetched when there is room to spare.
	WindowMemory int64
	// Observe, when set, is told of every shard stream: called with the
	// peer and planned bytes as it opens, it returns the function to call
	// once at its end (sched.Tracker.Begin has this shape).
	Observe func(peer meta.PeerID, bytes int64) func(err error, n int64, dur time.Duration)
	// CutCommits, when positive, is for fault tests only: a write's
	// commits reach the peers of its first CutCommits shards and no
	// others, and Crash is called as soon as those landed, as when a
	// gateway dies between the commits of one write.
	CutCommits int
	Crash      func()
}

// Layer is the object layer: it turns S3 operations into erasure-coded
// shard writes and reads on the storage peers. Safe for concurrent use.
type Layer struct {
	cfg     Config
	log     zerolog.Logger
	classes map[string]meta.Code

	coders sync.Map // coderKey → *erasure.Coder

	clock *hlc

	buckets bucketCache
	health  *health
	repairs atomic.Uint64
	// completing serialises the completes of one upload through this
	// gateway, so a retried or concurrent Complete finds the first one's
	// object rather than racing it on the peers.
	completing keyLocks
	// rewriting serialises the rewrites of one key through this gateway
	// (tags, retention, legal hold), so that they compose instead of
	// racing each other on the peers.
	rewriting keyLocks

	listBatch int // entries per peer List call; 0 sizes it to the page

	// metaPhaseNs is the moving average of how long a read's first
	// metadata phase took to settle it (metaHedge).
	metaPhaseNs atomic.Int64
	// listTurn rotates the peers a listing asks first (listReadSet).
	listTurn atomic.Uint64

	winMem *windowMemory // bounds all GETs' chunk buffers

	settling chan struct{} // a token per settle in flight (settle.go)
}

type coderKey struct{ k, m, block int }

// New validates cfg, fills defaults and returns a Layer.
func New(cfg Config) (*Layer, error) {
	if cfg.Cluster == nil {
		return nil, errors.New("object: Config.Cluster is required")
	}
	if cfg.DefaultCode == (meta.Code{}) {
		cfg.DefaultCode = meta.Code{K: 4, M: 2}
	}
	if !cfg.DefaultCode.Valid() {
		return nil, fmt.Errorf("object: invalid default code %s", cfg.DefaultCode)
	}
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.InlineLimit == 0 {
		cfg.InlineLimit = DefaultInlineLimit
	}
	if cfg.WriterID == "" {
		cfg.WriterID = randomID(8)
	}
	if cfg.PeerTimeout <= 0 {
		cfg.PeerTimeout = DefaultPeerTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = min(DefaultStallAfter, cfg.PeerTimeout)
	}
	if cfg.StallHold <= 0 {
		cfg.StallHold = DefaultStallHold
	}
	if cfg.SettleWait <= 0 {
		cfg.SettleWait = DefaultSettleWait
	}
	if cfg.BucketCacheTTL == 0 {
		cfg.BucketCacheTTL = DefaultBucketCacheTTL
	}
	if cfg.MinPartSize <= 0 {
		cfg.MinPartSize = MinPartSize
	}
	classes, err := buildClasses(cfg.DefaultCode, cfg.Classes)
	if err != nil {
		return nil, err
	}
	if cfg.FetchWindow <= 0 {
		cfg.FetchWindow = MaxPooledShard
	}
	if cfg.WindowMemory <= 0 {
		cfg.WindowMemory = DefaultWindowMemory
	}
	if cfg.CutCommits > 0 && cfg.Crash == nil {
		return nil, errors.New("object: Config.CutCommits needs Config.Crash")
	}
	if cfg.Pool == nil {
		if cfg.Pool, err = NewFetchPool(sched.DefaultPolicy, sched.Config{}); err != nil {
			return nil, fmt.Errorf("object: %w", err)
		}
	}
	l := &Layer{
		cfg:     cfg,
		log:     cfg.Logger.With().Str("component", "object").Logger(),
		classes: classes,
		clock:   newHLC(cfg.Now),
		winMem:  newWindowMemory(cfg.WindowMemory),

		settling: make(chan struct{}, maxSettling),
	}
	l.buckets.ttl = cfg.BucketCacheTTL
	l.health = newHealth(cfg.StallAfter, cfg.PeerTimeout, cfg.StallHold, time.Now)
	return l, nil
}

func buildClasses(def meta.Code, given map[string]meta.Code) (map[string]meta.Code, error) {
	out := make(map[string]meta.Code, len(given)+2)
	for name, c := range given {
		if !c.Valid() {
			return nil, fmt.Errorf("object: storage class %s: invalid code %s", name, c)
		}
		out[name] = c
	}
	out[ClassStandard] = def
	if _, ok := out[ClassReduced]; !ok {
		rrs := def
		if n := def.N(); n >= 2 {
			rrs = meta.Code{K: n - 1, M: 1}
		}
		out[ClassReduced] = rrs
	}
	return out, nil
}

// codeFor resolves a storage class name ("" = STANDARD) to its code and
// checks that the ring is wide enough for it.
func (l *Layer) codeFor(class string) (string, meta.Code, error) {
	if class == "" {
		class = ClassStandard
	}
	c, ok := l.classes[class]
	if !ok {
		return "", meta.Code{}, fmt.Errorf("storage class %q: %w", class, ErrInvalidStorageClass)
	}
	if err := l.checkWidth(class, c); err != nil {
		return "", meta.Code{}, err
	}
	return class, c, nil
}

// checkWidth refuses a code wider than the ring. While the ring is
// narrower than even the default code, peers are still joining (or the
// layout lost some): that is ErrNotReady, a retryable 503, since the same
// request succeeds once they are in.
func (l *Layer) checkWidth(class string, c meta.Code) error {
	peers := len(l.cfg.Cluster.Peers())
	if def := l.classes[ClassStandard]; def.N() > peers {
		return fmt.Errorf("the ring has %d peers, the default code %s needs %d: %w", peers, def, def.N(), ErrNotReady)
	}
	if c.N() > peers {
		return fmt.Errorf("storage class %s needs code %s (%d peers) but the cluster has %d: %w",
			class, c, c.N(), peers, ErrCodeTooWide)
	}
	return nil
}

// WriteReady reports whether a write at the default code can be placed:
// nil exactly when PutObject would not refuse it for the ring's width.
// Liveness and free space are for the caller to judge.
func (l *Layer) WriteReady() error {
	return l.checkWidth(ClassStandard, l.classes[ClassStandard])
}

// coder returns the shared erasure coder for a code and block size.
func (l *Layer) coder(c meta.Code, block int) (*erasure.Coder, error) {
	key := coderKey{c.K, c.M, block}
	if v, ok := l.coders.Load(key); ok {
		return v.(*erasure.Coder), nil
	}
	ec, err := erasure.New(c.K, c.M, block)
	if err != nil {
		return nil, fmt.Errorf("erasure coder %s/%d: %w", c, block, err)
	}
	v, _ := l.coders.LoadOrStore(key, ec)
	return v.(*erasure.Coder), nil
}

// stamp returns a version stamp strictly newer than any this layer issued
// or observed (see hlc), so two writes through one gateway never tie even
// if the clock stalls or steps back.
func (l *Layer) stamp() meta.Stamp {
	return meta.Stamp{Nanos: l.clock.now(), Writer: l.cfg.WriterID}
}

// NewVersionID returns the ID of a new version of a versioned bucket's
// key (meta.NewVersionID), read from the clock that stamps versions, so
// that a version written after this layer saw another sorts before it.
func (l *Layer) NewVersionID() string { return meta.NewVersionID(l.clock.now()) }

// stampRecord gives o a new stamp and the ModTime it reads as.
func (l *Layer) stampRecord(o *meta.Object) {
	o.Stamp = l.stamp()
	o.ModTime = time.Unix(0, o.Stamp.Nanos).UTC()
}

// observeStamp advances the clock past a stamp a peer holds.
func (l *Layer) observeStamp(st meta.Stamp) { l.clock.observe(st.Nanos) }

// queryCodes is every distinct code objects of this layer can have, so a
// metadata read asks each placement an object of any class could have.
func (l *Layer) queryCodes() []meta.Code {
	seen := map[meta.Code]bool{}
	var out []meta.Code
	for _, c := range l.classes {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N() != out[j].N() {
			return out[i].N() > out[j].N()
		}
		return out[i].K > out[j].K
	})
	return out
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // documented never to fail
	return hex.EncodeToString(b)
}

func classOrStandard(c string) string {
	if c == "" {
		return ClassStandard
	}
	return c
}
