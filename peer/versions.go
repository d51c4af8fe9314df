package peer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"tessera/meta"
)

// pathVersions with GET reads a key's current record and the versions the
// peer keeps for it (storage.ReadVersions); pathSettle with POST settles
// one version (storage.Settle).
const (
	pathVersions = "/v1/versions"
	pathSettle   = "/v1/settle"
)

func (s *server) readVersions(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	if q.err != nil {
		return q.err
	}
	os, err := s.store.ReadVersions(r.Context(), bucket, key)
	if err != nil {
		return err
	}
	b, err := meta.MarshalVersions(os)
	if err != nil {
		return err
	}
	writeBytes(w, b)
	return nil
}

func (s *server) settle(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, key := q.bucket(), q.key()
	st := meta.Stamp{Nanos: q.int("nanos", 0), Writer: q.str("writer")}
	if q.err != nil {
		return q.err
	}
	if err := s.store.Settle(r.Context(), bucket, key, st); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ReadVersions returns the peer's current record for the key, then the
// versions it keeps, newest first, Inline filled.
func (c *Client) ReadVersions(ctx context.Context, bucket, key string) ([]*meta.Object, error) {
	b, err := c.getRaw(ctx, pathVersions, keyQuery(bucket, key))
	if err != nil {
		return nil, err
	}
	os, err := meta.UnmarshalVersions(b)
	if err != nil {
		return nil, fmt.Errorf("peer %s: read versions: %w", c.id, err)
	}
	return os, nil
}

// Settle tells the peer that version st of the key is on a write quorum,
// so it may drop the older versions it keeps.
func (c *Client) Settle(ctx context.Context, bucket, key string, st meta.Stamp) error {
	q := keyQuery(bucket, key)
	q.Set("nanos", strconv.FormatInt(st.Nanos, 10))
	q.Set("writer", st.Writer)
	return c.call(ctx, http.MethodPost, pathSettle, q, nil)
}
