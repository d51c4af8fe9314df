package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"tessera/object"
)

// conditionalDeleter is the optional Backend method behind conditional
// deletes; *object.Layer implements it. A Backend without it answers a
// conditional delete with 501 rather than delete unconditionally.
type conditionalDeleter interface {
	DeleteObjectIf(ctx context.Context, bucket, key string, check func(*object.ObjectInfo) error) error
}

var _ conditionalDeleter = (*object.Layer)(nil)

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

// deleteOne deletes bucket/key, under cond when it has any condition.
func (g *gateway) deleteOne(ctx context.Context, bucket, key string, cond deleteConditions) error {
	if !cond.present() {
		return g.be.DeleteObject(ctx, bucket, key)
	}
	cd, ok := g.be.(conditionalDeleter)
	if !ok {
		return apiErrf(errNotImplemented, "Conditional deletes are not supported.")
	}
	return cd.DeleteObjectIf(ctx, bucket, key, cond.check)
}
