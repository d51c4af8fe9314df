package gateway

import (
	"net/http"

	"tessera/object"
)

// putRequest is a parsed PutObject.
type putRequest struct {
	bucket, key string
	size        int64
	opts        object.PutOptions
}

func parsePut(r *http.Request) (putRequest, error) {
	bucket, key, err := objectParams(r)
	if err != nil {
		return putRequest{}, err
	}
	opts, err := parsePutOptions(r.Header)
	if err != nil {
		return putRequest{}, err
	}
	if err := parsePutConditions(r.Header, &opts); err != nil {
		return putRequest{}, err
	}
	if opts.ContentMD5, err = contentMD5(r.Header); err != nil {
		return putRequest{}, err
	}
	size, err := bodySize(r, object.MaxPutSize)
	if err != nil {
		return putRequest{}, err
	}
	return putRequest{bucket: bucket, key: key, size: size, opts: opts}, nil
}

func (g *gateway) putObject(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePut(r)
	if err != nil {
		return err
	}
	stored, vid, err := g.newVersion(r.Context(), p.bucket, p.key)
	if err != nil {
		return err
	}
	if vid != "" {
		p.opts.Current = g.current(p.bucket, p.key)
	}
	if err := g.lockOnWrite(r.Context(), p.bucket, r.Header, &p.opts); err != nil {
		return err
	}
	body := verifiedBody{Reader: sizedBody(r.Body, p.size), req: r}
	info, err := g.be.PutObject(r.Context(), p.bucket, stored, body, p.size, p.opts)
	if err != nil {
		return err
	}
	setWrittenVersion(w.Header(), vid)
	w.Header().Set("ETag", quoteETag(info.ETag))
	// S3 answers with the object's checksum: the client's, or the default
	// it computed.
	setObjectChecksum(w.Header(), info.Checksum)
	w.WriteHeader(http.StatusOK)
	return nil
}

// parsePutConditions reads a conditional write's If-Match and
// If-None-Match (see parseWriteConditions).
func parsePutConditions(h http.Header, opts *object.PutOptions) error {
	var err error
	opts.IfMatch, opts.IfNoneMatch, err = parseWriteConditions(h)
	return err
}
