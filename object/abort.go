package object

import (
	"context"
	"fmt"
	"time"
)

// AbortOptions tune AbortMultipart.
type AbortOptions struct {
	// IfInitiated, when set, aborts only an upload initiated at that time,
	// to the second (x-amz-if-match-initiated-time); another upload fails
	// with ErrPreconditionFailed and is kept. The check and the abort are
	// not atomic, but an upload's initiation time never changes, so the
	// only race is with another abort or complete of the same upload.
	IfInitiated time.Time
}

// AbortMultipart discards an upload and its parts on every peer that
// has it. ErrUploadNotFound when none had it.
func (l *Layer) AbortMultipart(ctx context.Context, bucket, key, uploadID string, opts AbortOptions) error {
	if err := l.abortMultipart(ctx, bucket, key, uploadID, opts); err != nil {
		return fmt.Errorf("abort multipart %s/%s: %w", bucket, key, err)
	}
	return nil
}

func (l *Layer) abortMultipart(ctx context.Context, bucket, key, uploadID string, opts AbortOptions) error {
	if !opts.IfInitiated.IsZero() {
		v, err := l.readUpload(ctx, bucket, key, uploadID)
		if err != nil {
			return err
		}
		if got := v.u.Initiated.UTC().Truncate(time.Second); !got.Equal(opts.IfInitiated.UTC().Truncate(time.Second)) {
			return fmt.Errorf("%w: upload initiated at %s", ErrPreconditionFailed, got.Format(time.RFC3339))
		}
	}
	q, err := l.querySet(bucket, key)
	if err != nil {
		return err
	}
	rs := fanout(ctx, l, q.peers, l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) (struct{}, error) {
		return struct{}{}, c.AbortUpload(ctx, bucket, key, uploadID)
	})
	if t := tallyOf(rs); t.ok == 0 {
		return l.uploadAbsent(ctx, q, bucket, t)
	}
	return nil
}
