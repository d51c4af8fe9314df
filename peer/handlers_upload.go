package peer

import (
	"fmt"
	"net/http"

	"tessera/meta"
	"tessera/storage"
)

func (s *server) putUpload(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key, id := q.bucket(), q.key(), q.uploadID()
	if q.err != nil {
		return q.err
	}
	var u meta.Upload
	if _, err := readRecord(w, r, &u); err != nil {
		return err
	}
	if u.Bucket != bucket || u.Key != key || u.UploadID != id {
		return fmt.Errorf("%w: record does not match upload %s", storage.ErrInvalidArgument, id)
	}
	if err := s.store.PutUpload(r.Context(), &u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) getUpload(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key, id := q.bucket(), q.key(), q.uploadID()
	if q.err != nil {
		return q.err
	}
	u, err := s.store.GetUpload(r.Context(), bucket, key, id)
	if err != nil {
		return err
	}
	rec, err := meta.Marshal(u, nil)
	if err != nil {
		return err
	}
	writeBytes(w, rec)
	return nil
}

func (s *server) abortUpload(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key, id := q.bucket(), q.key(), q.uploadID()
	if q.err != nil {
		return q.err
	}
	if err := s.store.AbortUpload(r.Context(), bucket, key, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) commitPart(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key, id, tmp := q.bucket(), q.key(), q.uploadID(), q.str("tmp")
	if q.err != nil {
		return q.err
	}
	var p meta.Part
	if _, err := readRecord(w, r, &p); err != nil {
		return err
	}
	if err := s.store.CommitPart(r.Context(), bucket, key, id, p, tmp); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) completeUpload(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key, id := q.bucket(), q.key(), q.uploadID()
	if q.err != nil {
		return q.err
	}
	o, err := readKeyRecord(w, r, bucket, key)
	if err != nil {
		return err
	}
	if err := s.store.CompleteUpload(r.Context(), o, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
