package sigv4

import (
	"crypto/subtle"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"strings"

	"tessera/checksum"
)

const checksumPrefix = "x-amz-checksum-"

// checksumNotValue lists x-amz-checksum-* headers that configure checksums
// rather than carry one.
var checksumNotValue = map[string]bool{"type": true, "algorithm": true, "mode": true}

// ChecksumProblem says what is wrong with a request's checksum headers, so
// the gateway can answer with S3's message for it.
type ChecksumProblem int

// The problems, each with the message S3 answers (Name fills %s).
const (
	UnknownChecksumHeader ChecksumProblem = iota // "The algorithm type you specified in x-amz-checksum- header is invalid."
	InvalidChecksumValue                         // "Value for %s header is invalid."
	InvalidTrailerValue                          // "Value for %s trailing header is invalid."
	MultipleChecksums                            // "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."
	SDKAlgorithmWithout                          // "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found."
	SDKAlgorithmMismatch                         // "Value for x-amz-sdk-checksum-algorithm header is invalid."
	UnsupportedTrailer                           // "The value specified in the x-amz-trailer header is not supported"
	ChecksumMismatch                             // BadDigest: "The %s you specified did not match the calculated checksum."
)

// ChecksumError is an invalid or mismatching checksum. It wraps
// ErrChecksumMismatch for ChecksumMismatch and ErrInvalidChecksum for
// every other problem.
type ChecksumError struct {
	Problem ChecksumProblem
	// Name is the header for the value problems, the algorithm (upper
	// case) for ChecksumMismatch.
	Name   string
	Detail string
}

func (e *ChecksumError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%v: %s", e.Unwrap(), e.Name)
	}
	return fmt.Sprintf("%v: %s: %s", e.Unwrap(), e.Name, e.Detail)
}

func (e *ChecksumError) Unwrap() error {
	if e.Problem == ChecksumMismatch {
		return ErrChecksumMismatch
	}
	return ErrInvalidChecksum
}

func checksumErr(p ChecksumProblem, name, format string, args ...any) error {
	return &ChecksumError{Problem: p, Name: name, Detail: fmt.Sprintf(format, args...)}
}

// bodyChecksum is the one flexible checksum a request may carry, computed over
// the decoded payload.
type bodyChecksum struct {
	alg  checksum.Algorithm
	h    hash.Hash
	want string // base64; empty until the trailer arrives
}

func newChecksum(alg checksum.Algorithm) *bodyChecksum {
	return &bodyChecksum{alg: alg, h: alg.New()}
}

// setWant validates a base64 value's encoding and length before keeping it.
func (c *bodyChecksum) setWant(v string, p ChecksumProblem) error {
	if _, err := c.alg.Decode(v); err != nil {
		return checksumErr(p, c.alg.Header(), "%.64q", v)
	}
	c.want = v
	return nil
}

// verify compares the computed sum with the declared one.
func (c *bodyChecksum) verify() error {
	got := checksum.Encode(c.h.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.want)) != 1 {
		return checksumErr(ChecksumMismatch, string(c.alg), "computed %s, declared %s", got, c.want)
	}
	return nil
}

// objectChecksums reports whether a request's x-amz-checksum-* headers
// describe the object being assembled rather than the request's body:
// CompleteMultipartUpload (POST with uploadId) carries the whole object's
// checksum, which the object layer checks against the parts.
func objectChecksums(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	return err == nil && q.Has("uploadId")
}

// requestChecksum finds the checksum a request declares for its body: an
// x-amz-checksum-* header (inTrailer false) or one named by x-amz-trailer
// (inTrailer true, value still unknown). S3 allows at most one, and
// x-amz-sdk-checksum-algorithm, when sent, must name it.
func requestChecksum(r *http.Request) (c *bodyChecksum, inTrailer bool, err error) {
	if objectChecksums(r) {
		return nil, false, nil
	}
	h := r.Header
	found, err := headerChecksums(h)
	if err != nil {
		return nil, false, err
	}
	tc, err := trailerChecksum(h)
	if err != nil {
		return nil, false, err
	}
	if tc != nil {
		found = append(found, tc)
	}
	if len(found) > 1 {
		return nil, false, checksumErr(MultipleChecksums, "", "%d checksums", len(found))
	}
	if len(found) == 1 {
		c = found[0]
	}
	if sdk := h.Get("X-Amz-Sdk-Checksum-Algorithm"); sdk != "" {
		if c == nil {
			return nil, false, checksumErr(SDKAlgorithmWithout, "x-amz-sdk-checksum-algorithm", "%.32q", sdk)
		}
		if !strings.EqualFold(sdk, string(c.alg)) {
			return nil, false, checksumErr(SDKAlgorithmMismatch, "x-amz-sdk-checksum-algorithm", "%.32q with %s", sdk, c.alg)
		}
	}
	return c, tc != nil, nil
}

// headerChecksums reads every x-amz-checksum-<algorithm> header.
func headerChecksums(h http.Header) ([]*bodyChecksum, error) {
	var found []*bodyChecksum
	for k, vs := range h {
		name, ok := checksumHeaderAlg(k)
		if !ok {
			continue
		}
		alg, ok := checksum.Parse(name)
		if !ok {
			return nil, checksumErr(UnknownChecksumHeader, strings.ToLower(k), "")
		}
		if len(vs) != 1 {
			return nil, checksumErr(MultipleChecksums, alg.Header(), "sent %d times", len(vs))
		}
		c := newChecksum(alg)
		if err := c.setWant(vs[0], InvalidChecksumValue); err != nil {
			return nil, err
		}
		found = append(found, c)
	}
	return found, nil
}

// checksumHeaderAlg returns the algorithm name of a checksum-carrying
// header.
func checksumHeaderAlg(name string) (string, bool) {
	ln := strings.ToLower(name)
	if !strings.HasPrefix(ln, checksumPrefix) {
		return "", false
	}
	alg := ln[len(checksumPrefix):]
	return alg, !checksumNotValue[alg]
}

// trailerChecksum reads x-amz-trailer, which may name one checksum.
func trailerChecksum(h http.Header) (*bodyChecksum, error) {
	var names []string
	for _, v := range h.Values("X-Amz-Trailer") {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	switch len(names) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, checksumErr(UnsupportedTrailer, "x-amz-trailer", "names %d trailers", len(names))
	}
	name, ok := checksumHeaderAlg(names[0])
	if !ok {
		return nil, checksumErr(UnsupportedTrailer, "x-amz-trailer", "%.64q is not a checksum", names[0])
	}
	alg, ok := checksum.Parse(name)
	if !ok {
		return nil, checksumErr(UnsupportedTrailer, "x-amz-trailer", "%.64q", names[0])
	}
	return newChecksum(alg), nil
}
