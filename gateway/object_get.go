package gateway

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"tessera/meta"
	"tessera/object"
	"tessera/versioning"
)

// getRequest is a parsed GetObject or HeadObject.
type getRequest struct {
	bucket, key string
	versionID   string // ?versionId, "" for the latest version
	rng         byteRange
	rangeHeader string // as sent, for an InvalidRange's RangeRequested
	hasRange    bool
	cond        preconditions
	partNumber  int // 0: none
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
	p := getRequest{bucket: bucket, key: key, versionID: q.Get("versionId"), cond: readPreconditions(r.Header, "")}
	p.rangeHeader = r.Header.Get("Range")
	p.rng, p.hasRange = parseRange(p.rangeHeader)
	if q.Has("partNumber") {
		if p.partNumber, err = parsePartNumber(q); err != nil {
			return getRequest{}, err
		}
		if r.Header.Get("Range") != "" {
			return getRequest{}, apiErrf(errInvalidRequest, "Cannot specify both Range header and partNumber query parameter")
		}
	}
	return p, nil
}

// checkVersionID refuses a ?versionId that cannot be a version ID at all
// (see versionIDShaped). One shaped like another store's IDs passes, to be
// answered NoSuchVersion, as S3 and other stores answer an ID they never
// gave.
func checkVersionID(q url.Values) error {
	// An empty versionId is no version: the latest (the AWS SDKs send an
	// empty string they were given).
	if v := q.Get("versionId"); v != "" && !versionIDShaped(v) {
		return apiErr(errInvalidVersionID)
	}
	return nil
}

// versionIDShaped reports whether v could be a version ID: "null", or 1 to
// 128 letters, digits and dashes (tessera's hex IDs, UUIDs, ULIDs).
// Anything else, a path or an underscore say, is InvalidArgument.
func versionIDShaped(v string) bool {
	if v == versioning.NullVersionID || meta.ValidVersionID(v) {
		return true
	}
	if v == "" || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
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
	if p.partNumber > 0 {
		if off, length, status, err = p.partSpan(h, info); err != nil {
			return 0, 0, 0, err
		}
	} else if p.hasRange {
		var whole bool
		if off, length, whole, err = p.rng.resolve(info.Size); err != nil {
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
			return 0, 0, 0, apiErrFields(errInvalidRange, errorField{"RangeRequested", p.rangeHeader},
				errorField{"ActualObjectSize", strconv.FormatInt(info.Size, 10)})
		}
		if !whole {
			status = http.StatusPartialContent
			h.Set("Content-Range", contentRange(off, length, info.Size))
		}
	}
	setObjectHeaders(h, info)
	setStoredExtras(h, info)
	if strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		setObjectChecksum(h, readChecksum(p, info))
	}
	applyResponseOverrides(h, r)
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	return off, length, status, nil
}

func (g *gateway) getObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseGet(r)
	if err != nil {
		return err
	}
	t, err := g.resolve(r.Context(), p.bucket, p.key, p.versionID)
	if err != nil {
		return err
	}
	if err := t.readable(w.Header(), nil); err != nil {
		return err
	}
	err = g.be.GetObject(r.Context(), p.bucket, t.stored, func(info object.ObjectInfo) (io.Writer, int64, int64, error) {
		if err := t.readable(w.Header(), &info); err != nil {
			return nil, 0, 0, err
		}
		off, length, status, err := p.plan(w, r, info)
		if err != nil {
			return nil, 0, 0, err
		}
		setVersionHeaders(w.Header(), t.id, false)
		w.WriteHeader(status)
		return w, off, length, nil
	})
	return t.notFound(err)
}

func (g *gateway) headObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parseGet(r)
	if err != nil {
		return err
	}
	t, info, err := g.headVersion(r.Context(), w.Header(), p.bucket, p.key, p.versionID)
	if err != nil {
		return err
	}
	_, _, status, err := p.plan(w, r, info)
	if err != nil {
		return err
	}
	setVersionHeaders(w.Header(), t.id, false)
	w.WriteHeader(status)
	return nil
}

// partSpan is the byte span of part p.partNumber. As S3 answers: 206
// with Content-Range for any part of a non-empty object, plus
// x-amz-mp-parts-count when the object came from a multipart upload (a
// single PUT is one part and gets no count); part 1 of a 0-byte object
// is 200 with no Content-Range, there being no byte to range over.
func (p getRequest) partSpan(h http.Header, info object.ObjectInfo) (off, length int64, status int, err error) {
	sizes := info.PartSizes
	if len(sizes) == 0 {
		sizes = []int64{info.Size}
	}
	if p.partNumber > len(sizes) {
		return 0, 0, 0, apiErrFields(errInvalidPartNumberRange,
			errorField{"ActualPartCount", strconv.Itoa(len(sizes))},
			errorField{"PartNumberRequested", strconv.Itoa(p.partNumber)})
	}
	for _, s := range sizes[:p.partNumber-1] {
		off += s
	}
	length = sizes[p.partNumber-1]
	if isMultipartETag(info.ETag) {
		h.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(len(sizes)))
	}
	if info.Size == 0 {
		return off, length, http.StatusOK, nil
	}
	h.Set("Content-Range", contentRange(off, length, info.Size))
	return off, length, http.StatusPartialContent, nil
}

// isMultipartETag reports whether etag is a completed upload's "md5-N".
func isMultipartETag(etag string) bool { return strings.Contains(etag, "-") }
