package peer

import (
	"fmt"
	"net/http"

	"tessera/meta"
	"tessera/storage"
)

// pathRepair commits a rebuilt copy of a version (storage.RepairCommit):
// like pathCommit, but a record with the stamp the peer already holds is
// accepted, so a damaged copy of the current version can be replaced.
const pathRepair = "/v1/repair"

func (s *server) repairCommit(w http.ResponseWriter, r *http.Request, q *query) error {
	return s.commitWith(w, r, q, s.store.RepairCommit)
}

// pathRelabel rewrites the record of the held version (storage.Relabel);
// pathVersion with DELETE drops one exact version (storage.DropVersion).
const (
	pathRelabel = "/v1/relabel"
	pathVersion = "/v1/version"
)

func (s *server) relabel(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	if q.err != nil {
		return q.err
	}
	o, err := readKeyRecord(w, r, bucket, key)
	if err != nil {
		return err
	}
	if err := s.store.Relabel(r.Context(), o); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) dropVersion(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	st := meta.Stamp{Nanos: q.int("nanos", 0), Writer: q.str("writer")}
	if q.err != nil {
		return q.err
	}
	if err := s.store.DropVersion(r.Context(), bucket, key, st); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pathRewrite makes a new version of the held one's data with another
// record (storage.Rewrite); the query names the version it replaces.
const pathRewrite = "/v1/rewrite"

func (s *server) rewrite(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	from := meta.Stamp{Nanos: q.int("nanos", 0), Writer: q.str("writer")}
	if q.err != nil {
		return q.err
	}
	o, err := readKeyRecord(w, r, bucket, key)
	if err != nil {
		return err
	}
	if err := s.store.Rewrite(r.Context(), o, from); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readKeyRecord reads the object record a request carries, which must
// be of the key its query names.
func readKeyRecord(w http.ResponseWriter, r *http.Request, bucket, key string) (*meta.Object, error) {
	var o meta.Object
	if _, err := readRecord(w, r, &o); err != nil {
		return nil, err
	}
	if o.Bucket != bucket || o.Key != key {
		return nil, fmt.Errorf("%w: record does not match %s/%s", storage.ErrInvalidArgument, bucket, key)
	}
	return &o, nil
}

// pathDrain starts decommissioning the peer (ServerConfig.Drain).
const pathDrain = "/v1/admin/drain"

func (s *server) drain(w http.ResponseWriter, r *http.Request, _ *query) error {
	if err := s.onDrain(r.Context()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
