package peer

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"tessera/meta"
	"tessera/storage"
)

// pathTombstones lists a bucket's tombstones by age, for the collector
// (storage.ListTombstones): before and after-nanos are Unix nanoseconds.
const pathTombstones = "/v1/tombstones"

func (s *server) listTombstones(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	before := q.int("before", 0)
	afterNanos := q.int("after-nanos", 0)
	limit := q.int("limit", 0)
	if q.err != nil {
		return q.err
	}
	limit = max(0, min(limit, storage.MaxListLimit)) // 0: the store's default
	after := meta.Entry{Key: q.str("after"), Stamp: meta.Stamp{Nanos: afterNanos}}
	ents, err := s.store.ListTombstones(r.Context(), bucket, time.Unix(0, before), after, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ents)
	return nil
}

// ListTombstones returns up to limit of the peer's tombstones in bucket
// stamped before before, oldest first, after the tombstone after (the
// zero Entry: from the oldest).
func (c *Client) ListTombstones(ctx context.Context, bucket string, before time.Time, after meta.Entry, limit int) ([]meta.Entry, error) {
	q := bucketQuery(bucket)
	q.Set("before", strconv.FormatInt(before.UnixNano(), 10))
	q.Set("after-nanos", strconv.FormatInt(after.Stamp.Nanos, 10))
	q.Set("after", after.Key)
	q.Set("limit", strconv.Itoa(limit))
	var ents []meta.Entry
	err := c.getJSON(ctx, http.MethodGet, pathTombstones, q, nil, &ents)
	return ents, err
}
