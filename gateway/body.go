package gateway

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
)

// errBodyTooLong: the (decoded) body has more bytes than it declared.
var errBodyTooLong = apiErrf(errInvalidRequest, "The request body is longer than its declared length.")

// bodySize returns the payload length of an object or part upload: the
// decoded length for aws-chunked bodies, else Content-Length, or -1 for a
// plain Transfer-Encoding: chunked body, whose length only its end tells
// (the object layer bounds it). S3 itself answers those 501; Ceph and
// MinIO take them, and streaming clients that cannot know the length
// need them. An aws-chunked body must declare its decoded length.
func bodySize(r *http.Request, limit int64) (int64, error) {
	size := authResult(r).Size
	if size < 0 && strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return 0, apiErr(errMissingContentLength)
	}
	if size > limit {
		return 0, apiErr(errEntityTooLarge)
	}
	return max(size, -1), nil
}

// sizedBody is r checked against its declared size (newExactReader), or
// r itself when the size is unknown.
func sizedBody(r io.Reader, size int64) io.Reader {
	if size < 0 {
		return r
	}
	return newExactReader(r, size)
}

// exactReader yields exactly n bytes of r and reports io.EOF only after r
// has: the verifying body from the Authenticator checks signatures and
// checksums on its final Read, and the consumer must not see a clean end
// before that check ran. A short body fails with io.ErrUnexpectedEOF, a
// long one with errBodyTooLong.
type exactReader struct {
	r    io.Reader
	left int64
	done bool
	err  error
}

func newExactReader(r io.Reader, n int64) *exactReader { return &exactReader{r: r, left: n} }

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, e.finish()
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case errors.Is(err, io.EOF) && e.left > 0:
		return n, io.ErrUnexpectedEOF
	case err != nil:
		return n, err
	case e.left == 0:
		return n, e.finish()
	}
	return n, nil
}

// finish reads past the declared end once, so that r reports its own EOF
// (or verification error) and any excess byte is caught.
func (e *exactReader) finish() error {
	if e.done {
		return e.err
	}
	e.done = true
	var b [1]byte
	for range 100 {
		n, err := e.r.Read(b[:])
		switch {
		case n > 0:
			e.err = errBodyTooLong
		case errors.Is(err, io.EOF):
			e.err = io.EOF
		case err != nil:
			e.err = err
		default:
			continue
		}
		return e.err
	}
	e.err = io.ErrNoProgress
	return e.err
}

// contentMD5 decodes a Content-MD5 header; absent is nil.
func contentMD5(h http.Header) ([]byte, error) {
	vs, sent := h["Content-Md5"]
	if !sent {
		return nil, nil
	}
	v := ""
	if len(vs) == 1 {
		v = vs[0]
	}
	sum, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(sum) != md5.Size {
		// S3 names the header's value in the error, whether it did not
		// decode or decoded to something that is not an MD5.
		return nil, apiErrFields(errInvalidDigest, errorField{"Content-MD5", v})
	}
	return sum, nil
}

// readBody reads a small request body (an XML document) whole, bounded by
// the configured limit, and checks Content-MD5 when the client sent one.
func (g *gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	want, err := contentMD5(r.Header)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody))
	if err != nil {
		return nil, err
	}
	if want != nil {
		got := md5.Sum(body)
		if !bytes.Equal(got[:], want) {
			return nil, md5Mismatch(want, got[:])
		}
	}
	return body, nil
}
