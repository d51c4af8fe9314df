package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"tessera/meta"
	"tessera/storage"
)

// Body limits. Records are bounded by the codec's own limit plus slack;
// everything else that is not a shard stream is small.
const (
	maxRecordBody = 64<<20 + 64<<10
	maxSmallBody  = 1 << 20
)

// Route paths (see doc.go).
const (
	pathBuckets  = "/v1/buckets"
	pathBucket   = "/v1/bucket"
	pathStage    = "/v1/stage"
	pathCommit   = "/v1/commit"
	pathMeta     = "/v1/meta"
	pathShard    = "/v1/shard"
	pathList     = "/v1/list"
	pathUpload   = "/v1/upload"
	pathPart     = "/v1/part"
	pathComplete = "/v1/complete"
)

// commitRequest is the body of a commit; the object's Inline bytes travel
// as the record's inline blob.
type commitRequest struct {
	Object *meta.Object `json:"object"`
	Staged []string     `json:"staged"`
}

type stageResponse struct {
	ID string `json:"id"`
}

// query is a request's parsed query string. Each accessor validates its
// parameter; the first failure sticks in err.
type query struct {
	v   url.Values
	err error
}

// parseQuery rejects malformed escapes and repeated parameters, which
// would otherwise make "which value counts" ambiguous.
func parseQuery(raw string) (*query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: query: %v", storage.ErrInvalidArgument, err)
	}
	for k, vals := range v {
		if len(vals) > 1 {
			return nil, fmt.Errorf("%w: repeated query parameter %q", storage.ErrInvalidArgument, k)
		}
	}
	return &query{v: v}, nil
}

func (q *query) fail(name string) {
	if q.err == nil {
		q.err = fmt.Errorf("%w: query parameter %q", storage.ErrInvalidArgument, name)
	}
}

func (q *query) str(name string) string { return q.v.Get(name) }

func (q *query) bucket() string {
	b := q.v.Get("bucket")
	if !storage.ValidBucket(b) {
		q.fail("bucket")
	}
	return b
}

func (q *query) key() string {
	k := q.v.Get("key")
	if !storage.ValidKey(k) {
		q.fail("key")
	}
	return k
}

func (q *query) uploadID() string {
	id := q.v.Get("upload")
	if !storage.ValidUploadID(id) {
		q.fail("upload")
	}
	return id
}

// int parses a decimal parameter; def when absent.
func (q *query) int(name string, def int64) int64 {
	s, ok := q.v[name]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(s[0], 10, 64)
	if err != nil {
		q.fail(name)
	}
	return n
}

// readBody reads a whole non-stream request body of at most max bytes.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, fmt.Errorf("%w: body over %d bytes", storage.ErrInvalidArgument, max)
	}
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}

// readRecord decodes a request body record into v. Damage in a request is
// the sender's problem, so it is reported as a bad argument, not as a
// corrupt record of this peer.
func readRecord(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	b, err := readBody(w, r, maxRecordBody)
	if err != nil {
		return nil, err
	}
	inline, err := meta.Unmarshal(b, v)
	if err != nil {
		return nil, fmt.Errorf("%w: request record: %v", storage.ErrInvalidArgument, err)
	}
	return inline, nil
}

func writeBytes(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"Internal","message":"encode answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
