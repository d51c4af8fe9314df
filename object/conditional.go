package object

import (
	"context"
	"errors"
	"fmt"
)

// ErrPreconditionFailed: a conditional write's If-Match or If-None-Match
// did not hold.
var ErrPreconditionFailed = errors.New("precondition failed")

// checkPutCondition evaluates a conditional write against the current
// version, after the body has been staged and right before the commit, so
// the window in which another writer can slip in is one metadata round
// trip rather than the whole upload. It is not a compare-and-swap: two
// conditional writers racing inside that window may both succeed, and the
// later stamp wins. Peers have no atomic conditional commit to close it.
func (l *Layer) checkPutCondition(ctx context.Context, bucket, key string, opts PutOptions) error {
	if opts.IfNoneMatch == "" && opts.IfMatch == "" && opts.IfStored == "" {
		return nil
	}
	current := opts.Current
	if current == nil {
		current = func(ctx context.Context) (Current, bool, error) { return l.current(ctx, bucket, key) }
	}
	cur, exists, err := current(ctx)
	if err != nil {
		return fmt.Errorf("conditional write: %w", err)
	}
	if opts.IfNoneMatch != "" && exists && (opts.IfNoneMatch == "*" || opts.IfNoneMatch == cur.ETag) {
		return fmt.Errorf("%w: %s/%s exists", ErrPreconditionFailed, bucket, key)
	}
	if opts.IfMatch == "" && opts.IfStored == "" {
		return nil
	}
	if !exists {
		return fmt.Errorf("conditional write: %w", ErrObjectNotFound)
	}
	if opts.IfMatch != "" && opts.IfMatch != "*" && opts.IfMatch != cur.ETag {
		return fmt.Errorf("%w: %s/%s has ETag %s", ErrPreconditionFailed, bucket, key, cur.ETag)
	}
	if opts.IfStored != "" && opts.IfStored != cur.Stored {
		return fmt.Errorf("%w: %s/%s is now stored as %q", ErrPreconditionFailed, bucket, key, cur.Stored)
	}
	return nil
}

// current is the CurrentFunc of an unversioned key: its one stored
// object.
func (l *Layer) current(ctx context.Context, bucket, key string) (Current, bool, error) {
	v, err := l.resolve(ctx, bucket, key)
	switch {
	case errors.Is(err, ErrObjectNotFound):
		return Current{}, false, nil
	case err != nil:
		return Current{}, false, err
	}
	return Current{ETag: v.obj.ETag, Stored: key}, true, nil
}
