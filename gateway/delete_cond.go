package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"tessera/object"
)

// deleteConditions are a conditional delete's If-Match (or a DeleteObjects
// entry's ETag), x-amz-if-match-size and x-amz-if-match-last-modified-time.
type deleteConditions struct {
	ifMatch string
	size    int64 // -1: absent
	modTime time.Time
}

func parseDeleteConditions(h http.Header) (deleteConditions, error) {
	c := deleteConditions{ifMatch: h.Get("If-Match"), size: -1}
	if v := h.Get("X-Amz-If-Match-Size"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, apiErrf(errInvalidArgument, "The x-amz-if-match-size header must be a non-negative integer.")
		}
		c.size = n
	}
	if v := h.Get("X-Amz-If-Match-Last-Modified-Time"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, v); err != nil {
				return c, apiErrf(errInvalidArgument, "The x-amz-if-match-last-modified-time header must be an HTTP date.")
			}
		}
		c.modTime = t.UTC()
	}
	return c, nil
}

func (c deleteConditions) present() bool {
	return c.ifMatch != "" || c.size >= 0 || !c.modTime.IsZero()
}

// check decides a conditional delete against the current version (nil
// when the key has none). As S3: a condition that does not hold is 412
// naming it; If-Match on a missing key is NoSuchKey, while the size and
// time conditions alone let the delete of a missing key succeed.
func (c deleteConditions) check(info *object.ObjectInfo) error {
	failed := func(name string) error { return apiErrFields(errPreconditionFailed, errorField{"Condition", name}) }
	switch {
	case info == nil && c.ifMatch != "":
		return apiErr(errNoSuchKey)
	case info == nil:
		return nil
	case c.ifMatch != "" && !etagMatches(c.ifMatch, info.ETag):
		return failed("If-Match")
	case c.size >= 0 && info.Size != c.size:
		return failed("x-amz-if-match-size")
	case !c.modTime.IsZero() && !info.ModTime.UTC().Truncate(time.Second).Equal(c.modTime.Truncate(time.Second)):
		return failed("x-amz-if-match-last-modified-time")
	}
	return nil
}

// deleteOne deletes bucket/key, under cond when it has any condition;
// bypass is the caller's consent to lift a governance retention, which
// the peers holding the version weigh.
func (g *gateway) deleteOne(ctx context.Context, bucket, key string, cond deleteConditions, bypass bool) error {
	opts := object.DeleteOptions{BypassGovernance: bypass}
	if cond.present() {
		opts.Check = cond.check
	}
	return g.be.DeleteObjectWith(ctx, bucket, key, opts)
}
