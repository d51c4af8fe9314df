package peer

import (
	"context"
	"net/http"

	"tessera/meta"
)

// pathUploads lists a bucket's multipart uploads in progress.
const pathUploads = "/v1/uploads"

func (s *server) listUploads(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	if q.err != nil {
		return q.err
	}
	ups, err := s.store.ListUploads(r.Context(), bucket, q.str("prefix"))
	if err != nil {
		return err
	}
	if ups == nil {
		ups = []meta.Upload{}
	}
	writeJSON(w, http.StatusOK, ups)
	return nil
}

// ListUploads returns the peer's records (without parts) of the uploads in
// progress in bucket under prefix, sorted by key then initiation.
func (c *Client) ListUploads(ctx context.Context, bucket, prefix string) ([]meta.Upload, error) {
	q := bucketQuery(bucket)
	q.Set("prefix", prefix)
	var ups []meta.Upload
	err := c.getJSON(ctx, http.MethodGet, pathUploads, q, nil, &ups)
	return ups, err
}
