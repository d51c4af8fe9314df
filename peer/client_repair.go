package peer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"tessera/meta"
)

// RepairCommit installs a rebuilt copy of o on the peer, replacing a copy
// of the same version; a newer record on the peer fails with meta.ErrStale.
func (c *Client) RepairCommit(ctx context.Context, o *meta.Object, staged []string) error {
	if o == nil {
		return fmt.Errorf("peer %s: repair commit: nil object", c.id)
	}
	body, err := recordBody(&commitRequest{Object: o, Staged: staged}, o.Inline)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, pathRepair, keyQuery(o.Bucket, o.Key), body)
}

// Relabel rewrites the record of the version the peer holds (same stamp
// and shard) with o's distribution; the peer keeps its shard data.
func (c *Client) Relabel(ctx context.Context, o *meta.Object) error {
	if o == nil {
		return fmt.Errorf("peer %s: relabel: nil object", c.id)
	}
	rec := *o
	rec.Inline = nil // the peer keeps its own
	body, err := recordBody(&rec, nil)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, pathRelabel, keyQuery(o.Bucket, o.Key), body)
}

// Rewrite makes o, a new version with the data of version from (the
// peer's current one), the key's record; the peer links its own shard
// files and keeps its inline bytes, so only the record travels.
func (c *Client) Rewrite(ctx context.Context, o *meta.Object, from meta.Stamp) error {
	if o == nil {
		return fmt.Errorf("peer %s: rewrite: nil object", c.id)
	}
	rec := *o
	rec.Inline = nil // the peer keeps its own
	body, err := recordBody(&rec, nil)
	if err != nil {
		return err
	}
	q := keyQuery(o.Bucket, o.Key)
	q.Set("nanos", strconv.FormatInt(from.Nanos, 10))
	q.Set("writer", from.Writer)
	return c.call(ctx, http.MethodPost, pathRewrite, q, body)
}

// DropVersion removes the peer's copy of version st of the key; a newer
// copy stays (meta.ErrStale).
func (c *Client) DropVersion(ctx context.Context, bucket, key string, st meta.Stamp) error {
	q := keyQuery(bucket, key)
	q.Set("nanos", strconv.FormatInt(st.Nanos, 10))
	q.Set("writer", st.Writer)
	return c.call(ctx, http.MethodDelete, pathVersion, q, nil)
}

// Drain asks the peer to decommission itself: it gives up its place on
// the ring, its data moves to the other peers, and it then leaves the
// ring. The call returns once the peer has announced it.
func (c *Client) Drain(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, pathDrain, nil, nil)
}
