package sigv4

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"slices"
	"strings"
)

// x-amz-content-sha256 values that are not a hash.
const (
	unsignedPayload          = "UNSIGNED-PAYLOAD"
	streamingSigned          = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTrailer   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// payloadModes are the x-amz-content-sha256 values S3 accepts beside a
// hex SHA-256, in the order its refusal lists them. The ECDSA ones are
// SigV4a's, which this package refuses once the signature is known.
var payloadModes = []string{
	unsignedPayload, streamingUnsignedTrailer, streamingSigned, streamingSignedTrailer,
	"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER",
}

// checkPayloadHash refuses an x-amz-content-sha256 that is neither a
// payload mode nor a SHA-256, before the signature is checked, as S3.
func checkPayloadHash(v string) error {
	if slices.Contains(payloadModes, v) {
		return nil
	}
	if b, err := hex.DecodeString(v); err == nil && len(b) == sha256.Size {
		return nil
	}
	e := newError(ErrInvalidAuthorization, "x-amz-content-sha256 must be %s or a valid sha256 value.", strings.Join(payloadModes, ", "))
	e.ArgumentName, e.ArgumentValue = "x-amz-content-sha256", clip(v, 256)
	return e
}

// newResult picks the body reader for the payload mode the request signed.
func newResult(r *http.Request, s *signed, key []byte, presigned bool) (*Result, error) {
	ck, inTrailer, err := requestChecksum(r)
	if err != nil {
		return nil, err
	}
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	res := &Result{AccessKey: s.cred.accessKey, Size: r.ContentLength, Checksums: map[string]string{}}
	if ck != nil {
		res.Declared = ck.alg
	}
	mode := s.payloadHash
	switch mode {
	case streamingSigned, streamingSignedTrailer, streamingUnsignedTrailer:
		if presigned {
			return nil, malformed("presigned request with an aws-chunked payload")
		}
		return res, streamingBody(res, r, s, key, body, ck, inTrailer)
	}
	if inTrailer {
		return nil, fmt.Errorf("%w: x-amz-trailer needs an aws-chunked payload", ErrInvalidChecksum)
	}
	if mode == unsignedPayload {
		res.Body = body
		if ck != nil {
			res.Body = &verifyingReader{rc: body, ck: ck, out: res.Checksums}
		}
		return res, nil
	}
	if strings.HasPrefix(mode, "STREAMING-") {
		return nil, fmt.Errorf("%w: payload mode %.64q", ErrUnsupported, mode)
	}
	want, err := hex.DecodeString(mode)
	if err != nil || len(want) != sha256.Size {
		return nil, malformed("x-amz-content-sha256 %.80q", mode)
	}
	res.Body = &verifyingReader{rc: body, sha: sha256.New(), want: want, sent: mode, ck: ck, out: res.Checksums}
	return res, nil
}

// streamingBody sets res.Body to an aws-chunked decoder.
func streamingBody(res *Result, r *http.Request, s *signed, key []byte, body io.ReadCloser, ck *bodyChecksum, inTrailer bool) error {
	mode := s.payloadHash
	if inTrailer && mode == streamingSigned {
		return fmt.Errorf("%w: x-amz-trailer with %s", ErrInvalidChecksum, mode)
	}
	res.Size = -1
	if dl := r.Header.Get("X-Amz-Decoded-Content-Length"); dl != "" {
		n, ok := parseDecimal(dl)
		if !ok {
			// S3 answers as if the length were missing.
			return &Error{Err: ErrMissingLength, Detail: fmt.Sprintf("x-amz-decoded-content-length %.32q", dl)}
		}
		res.Size = n
	}
	cfg := chunkConfig{
		trailer:     mode != streamingSigned,
		want:        res.Size,
		ck:          ck,
		ckInTrailer: inTrailer,
		out:         res.Checksums,
	}
	if mode != streamingUnsignedTrailer {
		cfg.signer = &chunkSigner{key: key, amzDate: s.amzDate, scope: s.cred.scope(), prev: hex.EncodeToString(s.signature)}
	}
	res.Body = newChunkedReader(body, cfg)
	return nil
}

// verifyingReader checks a whole-payload SHA-256 and/or a flexible
// checksum when the underlying body reaches EOF.
type verifyingReader struct {
	rc   io.ReadCloser
	sha  hash.Hash // nil: payload hash not checked
	want []byte
	sent string        // x-amz-content-sha256 as sent
	ck   *bodyChecksum // nil: no checksum
	out  map[string]string
	err  error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	if n > 0 {
		if v.sha != nil {
			v.sha.Write(p[:n])
		}
		if v.ck != nil {
			v.ck.h.Write(p[:n])
		}
	}
	if err == io.EOF {
		err = v.finish()
	}
	if err != nil {
		v.err = err
	}
	return n, err
}

func (v *verifyingReader) finish() error {
	if v.sha != nil {
		if sum := v.sha.Sum(nil); subtle.ConstantTimeCompare(sum, v.want) != 1 {
			return &Error{Err: ErrContentSHA256Mismatch, ClientSHA256: v.sent, ComputedSHA256: hex.EncodeToString(sum)}
		}
	}
	if v.ck != nil {
		if err := v.ck.verify(); err != nil {
			return err
		}
		v.out[v.ck.alg.Lower()] = v.ck.want
	}
	return io.EOF
}

func (v *verifyingReader) Close() error { return v.rc.Close() }
