package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"

	"github.com/rs/zerolog/hlog"

	"tessera/meta"
	"tessera/storage"
)

func (s *server) listBuckets(w http.ResponseWriter, r *http.Request, _ *query) error {
	bs, err := s.store.ListBuckets(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, bs)
	return nil
}

func (s *server) makeBucket(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	if q.err != nil {
		return q.err
	}
	var b meta.Bucket
	if _, err := readRecord(w, r, &b); err != nil {
		return err
	}
	if b.Name != bucket {
		return fmt.Errorf("%w: record names bucket %q", storage.ErrInvalidArgument, b.Name)
	}
	if err := s.store.MakeBucket(r.Context(), b); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) statBucket(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	if q.err != nil {
		return q.err
	}
	b, err := s.store.StatBucket(r.Context(), bucket)
	if err != nil {
		return err
	}
	rec, err := meta.Marshal(&b, nil)
	if err != nil {
		return err
	}
	writeBytes(w, rec)
	return nil
}

func (s *server) deleteBucket(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	if q.err != nil {
		return q.err
	}
	if err := s.store.DeleteBucket(r.Context(), bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// stageShard streams the request body to disk; the request context ends
// when the client goes away, which aborts the copy.
func (s *server) stageShard(w http.ResponseWriter, r *http.Request, _ *query) error {
	id, err := s.store.StageShard(r.Context(), r.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, stageResponse{ID: id})
	return nil
}

func (s *server) commit(w http.ResponseWriter, r *http.Request, q *query) error {
	return s.commitWith(w, r, q, s.store.Commit)
}

// commitWith reads a commit request for the query's key and hands the
// record to install (Store.Commit or Store.RepairCommit).
func (s *server) commitWith(w http.ResponseWriter, r *http.Request, q *query,
	install func(context.Context, *meta.Object, []string) error) error {
	bucket, key := q.bucket(), q.key()
	if q.err != nil {
		return q.err
	}
	var req commitRequest
	inline, err := readRecord(w, r, &req)
	if err != nil {
		return err
	}
	o := req.Object
	if o == nil || o.Bucket != bucket || o.Key != key {
		return fmt.Errorf("%w: record does not match %s/%s", storage.ErrInvalidArgument, bucket, key)
	}
	o.Inline = inline
	if err := install(r.Context(), o, req.Staged); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) readMeta(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	if q.err != nil {
		return q.err
	}
	o, err := s.store.ReadMeta(r.Context(), bucket, key)
	if err != nil {
		return err
	}
	rec, err := meta.MarshalObject(o)
	if err != nil {
		return err
	}
	writeBytes(w, rec)
	return nil
}

func (s *server) readShard(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	st := meta.Stamp{Nanos: q.int("nanos", 0), Writer: q.str("writer")}
	part := q.int("part", 0)
	offset, length := q.int("offset", 0), q.int("length", -1)
	prio := q.int("prio", 0) // 0 or absent: untagged
	if q.err != nil {
		return q.err
	}
	if part < 1 || part > storage.MaxPartNumber {
		return fmt.Errorf("%w: part %d", storage.ErrInvalidArgument, part)
	}
	rc, n, err := s.store.OpenShard(r.Context(), bucket, key, st, int(part), offset, length)
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := s.pace.writer(r.Context(), w, prio)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	// Past this point the status is sent: a failed copy cuts the body
	// short, which the client sees against Content-Length.
	if _, err := io.Copy(out, rc); err != nil && !errors.Is(err, r.Context().Err()) {
		// A reader that has the shards it needs hangs up on the others
		// (a GET fetching more than k, a decoder failing over): the
		// caller's choice, not this peer's failure.
		ev := hlog.FromRequest(r).Warn()
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			ev = hlog.FromRequest(r).Debug()
		}
		ev.Err(err).Str("bucket", bucket).Str("key", key).Msg("shard stream cut")
	}
	return nil
}

func (s *server) list(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	limit := q.int("limit", 0)
	if q.err != nil {
		return q.err
	}
	limit = max(0, min(limit, storage.MaxListLimit)) // 0: the store's default
	ents, err := s.store.List(r.Context(), bucket, q.str("prefix"), q.str("after"), int(limit), q.str("delimiter"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ents)
	return nil
}
