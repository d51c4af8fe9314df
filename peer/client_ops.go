package peer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"tessera/meta"
)

func bucketQuery(bucket string) url.Values { return url.Values{"bucket": {bucket}} }

func keyQuery(bucket, key string) url.Values { return url.Values{"bucket": {bucket}, "key": {key}} }

func uploadQuery(bucket, key, uploadID string) url.Values {
	return url.Values{"bucket": {bucket}, "key": {key}, "upload": {uploadID}}
}

// MakeBucket creates the bucket on the peer (meta.ErrBucketExists if present).
func (c *Client) MakeBucket(ctx context.Context, b meta.Bucket) error {
	body, err := meta.Marshal(&b, nil)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPut, pathBucket, bucketQuery(b.Name), bytes.NewReader(body))
}

// StatBucket returns the peer's bucket record.
func (c *Client) StatBucket(ctx context.Context, bucket string) (meta.Bucket, error) {
	var b meta.Bucket
	_, err := c.getRecord(ctx, pathBucket, bucketQuery(bucket), &b)
	return b, err
}

// DeleteBucket removes the bucket with its uploads in progress
// (meta.ErrBucketNotEmpty while it holds live objects).
func (c *Client) DeleteBucket(ctx context.Context, bucket string) error {
	return c.call(ctx, http.MethodDelete, pathBucket, bucketQuery(bucket), nil)
}

// ListBuckets returns the peer's buckets sorted by name.
func (c *Client) ListBuckets(ctx context.Context) ([]meta.Bucket, error) {
	var bs []meta.Bucket
	err := c.getJSON(ctx, http.MethodGet, pathBuckets, nil, nil, &bs)
	return bs, err
}

// StageShard streams r to the peer's staging area as a chunked request
// body, without buffering it, and returns the staged id. r is never
// closed and never read after StageShard returns.
func (c *Client) StageShard(ctx context.Context, r io.Reader) (string, error) {
	g := &guardedReader{r: r}
	defer g.done.Store(true)
	var out stageResponse
	// The wrapper also hides r's type, so the transport neither closes it
	// nor buffers it to learn a length.
	if err := c.getJSON(ctx, http.MethodPost, pathStage, nil, g, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Commit makes o visible on the peer with its staged shard files.
func (c *Client) Commit(ctx context.Context, o *meta.Object, staged []string) error {
	if o == nil {
		return fmt.Errorf("peer %s: commit: nil object", c.id)
	}
	body, err := recordBody(&commitRequest{Object: o, Staged: staged}, o.Inline)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, pathCommit, keyQuery(o.Bucket, o.Key), body)
}

// ReadMeta returns the peer's record for the key, Inline filled.
func (c *Client) ReadMeta(ctx context.Context, bucket, key string) (*meta.Object, error) {
	b, err := c.getRaw(ctx, pathMeta, keyQuery(bucket, key))
	if err != nil {
		return nil, err
	}
	o, err := meta.UnmarshalObject(b)
	if err != nil {
		return nil, fmt.Errorf("peer %s: read meta: %w", c.id, err)
	}
	return o, nil
}

// ReadShard streams length bytes (to the end when length < 0) from offset
// of a shard file. The caller closes the reader; a body cut short fails
// its Read with io.ErrUnexpectedEOF.
func (c *Client) ReadShard(ctx context.Context, bucket, key string, stamp meta.Stamp, part int, offset, length int64) (io.ReadCloser, error) {
	q := keyQuery(bucket, key)
	q.Set("nanos", strconv.FormatInt(stamp.Nanos, 10))
	q.Set("writer", stamp.Writer)
	q.Set("part", strconv.Itoa(part))
	q.Set("offset", strconv.FormatInt(offset, 10))
	q.Set("length", strconv.FormatInt(length, 10))
	if prio := meta.ReadPriority(ctx); prio > 0 {
		q.Set("prio", strconv.FormatInt(prio, 10))
	}
	resp, err := c.do(ctx, http.MethodGet, pathShard, q, nil)
	if err != nil {
		return nil, err
	}
	if length >= 0 && resp.ContentLength != length {
		resp.Body.Close()
		return nil, fmt.Errorf("peer %s: read shard: answer of %d bytes, want %d", c.id, resp.ContentLength, length)
	}
	return resp.Body, nil
}

// List returns up to limit entries after `after` with the prefix, sorted,
// folded by delimiter when one is given (storage.Store.List). A peer of an
// earlier release ignores the delimiter and lists every key: a merge that
// folds takes both.
func (c *Client) List(ctx context.Context, bucket, prefix, after string, limit int, delimiter string) ([]meta.Entry, error) {
	q := bucketQuery(bucket)
	q.Set("prefix", prefix)
	q.Set("after", after)
	q.Set("limit", strconv.Itoa(limit))
	if delimiter != "" {
		q.Set("delimiter", delimiter)
	}
	var ents []meta.Entry
	err := c.getJSON(ctx, http.MethodGet, pathList, q, nil, &ents)
	return ents, err
}

// PutUpload stores the upload record on the peer.
func (c *Client) PutUpload(ctx context.Context, u *meta.Upload) error {
	if u == nil {
		return fmt.Errorf("peer %s: put upload: nil upload", c.id)
	}
	body, err := recordBody(u, nil)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPut, pathUpload, uploadQuery(u.Bucket, u.Key, u.UploadID), body)
}

// GetUpload returns the upload with the parts committed so far.
func (c *Client) GetUpload(ctx context.Context, bucket, key, uploadID string) (*meta.Upload, error) {
	var u meta.Upload
	if _, err := c.getRecord(ctx, pathUpload, uploadQuery(bucket, key, uploadID), &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// CommitPart makes staged file tmpID part p.Number of the upload.
func (c *Client) CommitPart(ctx context.Context, bucket, key, uploadID string, p meta.Part, tmpID string) error {
	body, err := recordBody(&p, nil)
	if err != nil {
		return err
	}
	q := uploadQuery(bucket, key, uploadID)
	q.Set("tmp", tmpID)
	return c.call(ctx, http.MethodPost, pathPart, q, body)
}

// CompleteUpload commits o from the upload's parts and removes the upload.
func (c *Client) CompleteUpload(ctx context.Context, o *meta.Object, uploadID string) error {
	if o == nil {
		return fmt.Errorf("peer %s: complete upload: nil object", c.id)
	}
	body, err := recordBody(o, nil)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, pathComplete, uploadQuery(o.Bucket, o.Key, uploadID), body)
}

// AbortUpload removes the upload and its parts.
func (c *Client) AbortUpload(ctx context.Context, bucket, key, uploadID string) error {
	return c.call(ctx, http.MethodDelete, pathUpload, uploadQuery(bucket, key, uploadID), nil)
}
