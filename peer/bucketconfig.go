package peer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"

	"tessera/meta"
	"tessera/storage"
)

// pathBucketConfig carries a bucket's named configuration records (CORS):
// PUT stores a meta.BucketConfig record, GET ?bucket=&name= returns it.
const pathBucketConfig = "/v1/bucket/config"

// PutBucketConfig stores c on the peer; the peer keeps the newer of c and
// what it holds.
func (c *Client) PutBucketConfig(ctx context.Context, bc meta.BucketConfig) error {
	body, err := meta.Marshal(&bc, nil)
	if err != nil {
		return err
	}
	q := url.Values{"bucket": {bc.Bucket}, "name": {bc.Name}}
	return c.call(ctx, http.MethodPut, pathBucketConfig, q, bytes.NewReader(body))
}

// GetBucketConfig returns the peer's record (meta.ErrNotFound when none).
func (c *Client) GetBucketConfig(ctx context.Context, bucket, name string) (meta.BucketConfig, error) {
	var bc meta.BucketConfig
	_, err := c.getRecord(ctx, pathBucketConfig, url.Values{"bucket": {bucket}, "name": {name}}, &bc)
	return bc, err
}

func (s *server) putBucketConfig(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, name := q.bucket(), q.str("name")
	if q.err != nil {
		return q.err
	}
	var bc meta.BucketConfig
	if _, err := readRecord(w, r, &bc); err != nil {
		return err
	}
	if bc.Bucket != bucket || bc.Name != name {
		return fmt.Errorf("%w: record names %q/%q", storage.ErrInvalidArgument, bc.Bucket, bc.Name)
	}
	if err := s.store.PutBucketConfig(r.Context(), bc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) getBucketConfig(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket, name := q.bucket(), q.str("name")
	if q.err != nil {
		return q.err
	}
	bc, err := s.store.GetBucketConfig(r.Context(), bucket, name)
	if err != nil {
		return err
	}
	rec, err := meta.Marshal(&bc, nil)
	if err != nil {
		return err
	}
	writeBytes(w, rec)
	return nil
}
