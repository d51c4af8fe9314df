package object

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"tessera/meta"
)

// DeleteBucket removes a bucket that holds no object from every peer,
// aborting its multipart uploads in progress first, as S3 does.
// ErrBucketNotEmpty when the listing shows a live object or a peer holds
// one; no upload is aborted then, unless an object arrived after the
// listing.
//
// The order keeps an interrupted delete harmless: every upload is aborted
// (records and parts, on every peer holding it) before any peer drops the
// bucket, so a crash or failure part way leaves the bucket with each of
// its uploads either aborted as an abort leaves it or untouched, and
// deleting again finishes the job. Each peer then drops the bucket with
// whatever it still holds (an upload started meanwhile, the record of one
// whose abort missed that peer) in one rename.
func (l *Layer) DeleteBucket(ctx context.Context, bucket string) error {
	if _, err := l.HeadBucket(ctx, bucket); err != nil {
		return fmt.Errorf("delete bucket: %w", err)
	}
	page, err := l.ListObjects(ctx, bucket, ListOptions{MaxKeys: 1})
	if err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	if len(page.Objects) > 0 || len(page.Prefixes) > 0 {
		return fmt.Errorf("delete bucket %s: %w", bucket, ErrBucketNotEmpty)
	}
	if err := l.abortBucketUploads(ctx, bucket); err != nil {
		return fmt.Errorf("delete bucket %s: %w", bucket, err)
	}
	peers := l.cfg.Cluster.Peers()
	rs := fanout(ctx, l, peers, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) (struct{}, error) {
		return struct{}{}, c.DeleteBucket(ctx, bucket)
	})
	l.buckets.forget(bucket)
	t := tallyOf(rs)
	if t.count(meta.ErrBucketNotEmpty) > 0 {
		return fmt.Errorf("delete bucket %s: %w", bucket, ErrBucketNotEmpty)
	}
	if need := majority(len(peers)); t.ok+t.count(meta.ErrBucketNotFound) < need {
		return fmt.Errorf("delete bucket %s: %w", bucket, t.failure("delete bucket", need))
	}
	return nil
}

// abortBucketUploads aborts every upload any peer holds in bucket, even
// one too few peers hold to be listed. It needs a majority of peers to
// list, so an upload is missed only when most of the ring is unreachable,
// and then the delete stops before any peer drops the bucket. A peer that
// no longer has the bucket (a delete running beside this one dropped it
// there) holds none of its uploads and counts toward that majority;
// ErrBucketNotFound when most peers say so. An upload already gone is
// fine; any other failure stops the delete too.
func (l *Layer) abortBucketUploads(ctx context.Context, bucket string) error {
	byID, t, _ := l.uploadCopies(ctx, bucket, "")
	need := majority(len(l.cfg.Cluster.Peers()))
	gone := t.count(meta.ErrBucketNotFound)
	if gone >= need {
		return fmt.Errorf("abort uploads: %w", ErrBucketNotFound)
	}
	if t.ok+gone < need {
		return fmt.Errorf("abort uploads: %w", t.quorumError("list uploads", need))
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := byID[id].u
		err := l.AbortMultipart(ctx, bucket, u.Key, u.UploadID, AbortOptions{})
		if err != nil && !errors.Is(err, ErrUploadNotFound) && !errors.Is(err, ErrBucketNotFound) {
			return fmt.Errorf("abort upload %s of %q: %w", u.UploadID, u.Key, err)
		}
	}
	return nil
}
