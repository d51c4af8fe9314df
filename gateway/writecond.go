package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"tessera/object"
)

// notImplementedHeader is S3's answer to a conditional write it does not
// serve: If-None-Match other than "*", or both If-Match and If-None-Match.
var notImplementedHeader = apiErrf(errNotImplemented, "A header you provided implies functionality that is not implemented.")

// parseWriteConditions reads a conditional write's If-Match and
// If-None-Match (PutObject, CompleteMultipartUpload). S3 takes one of
// them at a time and If-None-Match only as "*"; If-Match's ETag may come
// with or without quotes.
func parseWriteConditions(h http.Header) (ifMatch, ifNoneMatch string, err error) {
	ifMatch, ifNoneMatch = h.Get("If-Match"), h.Get("If-None-Match")
	switch {
	case ifNoneMatch != "" && (ifNoneMatch != "*" || ifMatch != ""):
		return "", "", notImplementedHeader
	case ifMatch != "":
		return unquoteETag(ifMatch), "", nil
	}
	return "", ifNoneMatch, nil
}

// parseObjectSize reads CompleteMultipartUpload's x-amz-mp-object-size,
// the size the client expects the object to have (nil when absent).
func parseObjectSize(h http.Header) (*int64, error) {
	v, ok := h["X-Amz-Mp-Object-Size"]
	if !ok {
		return nil, nil
	}
	raw := ""
	if len(v) > 0 {
		raw = v[0]
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	switch {
	case err != nil:
		return nil, apiErrf(errInvalidRequest, "Value for x-amz-mp-object-size header is invalid: '%s'", raw)
	case n < 0:
		return nil, apiErrf(errInvalidRequest, "Value for x-amz-mp-object-size header is less than zero: '%d'", n)
	}
	return &n, nil
}

// completeFailure adds to a refused CompleteMultipartUpload the elements
// S3 reports with it: the upload and the part for InvalidPart, the sizes
// for EntityTooSmall, and both sizes in a mismatch's message. The
// mismatch's message names the computed size where it says "header
// value" and the stated one after "what was computed": odd as it reads,
// that is the message the versitygw suite, written against S3, expects.
func completeFailure(err error, uploadID string) error {
	var pe *object.PartError
	var se *object.SizeMismatchError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, object.ErrEntityTooSmall):
		return apiErrFields(errEntityTooSmall,
			errorField{"ProposedSize", strconv.FormatInt(pe.Size, 10)},
			errorField{"MinSizeAllowed", strconv.FormatInt(pe.Min, 10)})
	case errors.As(err, &pe):
		return apiErrFields(errInvalidPart, errorField{"UploadId", uploadID},
			errorField{"PartNumber", strconv.Itoa(pe.Number)}, errorField{"ETag", pe.ETag})
	case errors.Is(err, object.ErrInvalidPart):
		return apiErrFields(errInvalidPart, errorField{"UploadId", uploadID})
	case errors.As(err, &se):
		return apiErrf(errInvalidRequest, "The provided 'x-amz-mp-object-size' header value %d does not match what was computed: %d",
			se.Computed, se.Stated)
	}
	return err
}

// parseAbortOptions reads AbortMultipartUpload's
// x-amz-if-match-initiated-time. A date S3 would ignore is left out: one
// that does not parse, or one in the future (no upload can have been
// initiated then), as S3 does for a copy's If-Modified-Since.
func parseAbortOptions(h http.Header, now time.Time) object.AbortOptions {
	t, err := http.ParseTime(h.Get("X-Amz-If-Match-Initiated-Time"))
	if err != nil || t.After(now) {
		return object.AbortOptions{}
	}
	return object.AbortOptions{IfInitiated: t}
}
