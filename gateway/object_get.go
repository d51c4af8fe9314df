package gateway

import (
	"io"
	"net/http"
	"net/url"
	"strconv"

	"tessera/object"
)

// getRequest is a parsed GetObject or HeadObject.
type getRequest struct {
	bucket, key string
	rng         byteRange
	hasRange    bool
	cond        preconditions
}

func parseGet(r *http.Request) (getRequest, error) {
	bucket, key, err := objectParams(r)
	if err != nil {
		return getRequest{}, err
	}
	q := r.URL.Query()
	if err := checkVersionID(q); err != nil {
		return getRequest{}, err
	}
	if q.Has("partNumber") {
		return getRequest{}, apiErrf(errNotImplemented, "GET by part number is not supported.")
	}
	p := getRequest{bucket: bucket, key: key, cond: readPreconditions(r.Header, "")}
	p.rng, p.hasRange = parseRange(r.Header.Get("Range"))
	return p, nil
}

// checkVersionID accepts only the "null" version: tessera keeps one
// version per key, so any other id names nothing, and ignoring it could
// delete or return the wrong object.
func checkVersionID(q url.Values) error {
	if q.Has("versionId") && q.Get("versionId") != "null" {
		return apiErr(errInvalidVersionID)
	}
	return nil
}

// plan checks the preconditions and the range against info and sets the
// response headers; it returns the byte span to send and the status.
func (p getRequest) plan(w http.ResponseWriter, r *http.Request, info object.ObjectInfo) (off, length int64, status int, err error) {
	h := w.Header()
	if err := p.cond.check(info); err != nil {
		if isCode(err, errNotModified) {
			h.Set("ETag", quoteETag(info.ETag))
			h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
		}
		return 0, 0, 0, err
	}
	off, length, status = 0, info.Size, http.StatusOK
	if p.hasRange {
		if off, length, err = p.rng.resolve(info.Size); err != nil {
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
			return 0, 0, 0, err
		}
		status = http.StatusPartialContent
		h.Set("Content-Range", contentRange(off, length, info.Size))
	}
	setObjectHeaders(h, info)
	applyResponseOverrides(h, r)
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	return off, length, status, nil
}

func (g *gateway) getObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseGet(r)
	if err != nil {
		return err
	}
	return g.be.GetObject(r.Context(), p.bucket, p.key, func(info object.ObjectInfo) (io.Writer, int64, int64, error) {
		off, length, status, err := p.plan(w, r, info)
		if err != nil {
			return nil, 0, 0, err
		}
		w.WriteHeader(status)
		return w, off, length, nil
	})
}

func (g *gateway) headObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseGet(r)
	if err != nil {
		return err
	}
	info, err := g.be.HeadObject(r.Context(), p.bucket, p.key)
	if err != nil {
		return err
	}
	_, _, status, err := p.plan(w, r, info)
	if err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}
