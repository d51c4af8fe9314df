package peer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"tessera/meta"
	"tessera/storage"
)

// pathTombstones with GET lists a bucket's tombstones by age, for the
// collector (storage.ListTombstones): before and after-nanos are Unix
// nanoseconds. With POST it commits a batch of tombstones
// (storage.CommitTombstones): the body is meta.MarshalBatch of them, the
// answer a JSON list of one wireError per tombstone, an empty code for
// one committed.
const pathTombstones = "/v1/tombstones"

func (s *server) commitTombstones(w http.ResponseWriter, r *http.Request, q *query) error {
	bucket := q.bucket()
	if q.err != nil {
		return q.err
	}
	b, err := readBody(w, r, maxRecordBody)
	if err != nil {
		return err
	}
	os, err := meta.UnmarshalBatch(b)
	if err != nil {
		return fmt.Errorf("%w: request batch: %v", storage.ErrInvalidArgument, err)
	}
	errs, err := s.store.CommitTombstones(r.Context(), bucket, os)
	if err != nil {
		return err
	}
	out := make([]wireError, len(errs))
	for i, e := range errs {
		if e != nil {
			code, _ := codeOf(e)
			out[i] = wireErrorOf(code, e)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// CommitTombstones commits tombstones of several keys of bucket on the
// peer in one index write; errs[i] answers os[i] as Commit would, err the
// whole call.
func (c *Client) CommitTombstones(ctx context.Context, bucket string, os []*meta.Object) (errs []error, err error) {
	body, err := meta.MarshalBatch(os)
	if err != nil {
		return nil, fmt.Errorf("peer %s: commit tombstones: %w", c.id, err)
	}
	var ans []wireError
	if err := c.getJSON(ctx, http.MethodPost, pathTombstones, bucketQuery(bucket), bytes.NewReader(body), &ans); err != nil {
		return nil, err
	}
	if len(ans) != len(os) {
		return nil, fmt.Errorf("peer %s: commit tombstones: %d answers for %d tombstones", c.id, len(ans), len(os))
	}
	errs = make([]error, len(os))
	for i, we := range ans {
		if we.Code != "" {
			errs[i] = &RemoteError{Peer: c.id, Op: "POST " + pathTombstones, Status: statusOfCode(we.Code),
				Code: we.Code, Message: we.Message, err: sentinelOfWire(we)}
		}
	}
	return errs, nil
}

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
