package sigv4

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"net/http"
	"strings"

	"github.com/minio/crc64nvme"
)

const checksumPrefix = "x-amz-checksum-"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumAlgs are S3's flexible checksum algorithms by lower-case name.
var checksumAlgs = map[string]func() hash.Hash{
	"crc32":     func() hash.Hash { return crc32.NewIEEE() },
	"crc32c":    func() hash.Hash { return crc32.New(castagnoli) },
	"crc64nvme": func() hash.Hash { return crc64nvme.New() },
	"sha1":      sha1.New,
	"sha256":    sha256.New,
}

// checksumNotValue lists x-amz-checksum-* headers that configure checksums
// rather than carry one.
var checksumNotValue = map[string]bool{"type": true, "algorithm": true, "mode": true}

// checksum is the one flexible checksum a request may carry, computed over
// the decoded payload.
type checksum struct {
	alg  string
	h    hash.Hash
	want string // base64; empty until the trailer arrives
}

func newChecksum(alg string) (*checksum, error) {
	mk, ok := checksumAlgs[alg]
	if !ok {
		return nil, fmt.Errorf("%w: unknown algorithm %.32q", ErrInvalidChecksum, alg)
	}
	return &checksum{alg: alg, h: mk()}, nil
}

// setWant validates a base64 value's encoding and length before keeping it.
func (c *checksum) setWant(v string) error {
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(b) != c.h.Size() {
		return fmt.Errorf("%w: %s value %.64q", ErrInvalidChecksum, c.alg, v)
	}
	c.want = v
	return nil
}

// verify compares the computed sum with the declared one.
func (c *checksum) verify() error {
	got := base64.StdEncoding.EncodeToString(c.h.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.want)) != 1 {
		return fmt.Errorf("%w: %s is %s, declared %s", ErrChecksumMismatch, c.alg, got, c.want)
	}
	return nil
}

// requestChecksum finds the checksum a request declares: an x-amz-checksum-*
// header (inTrailer false) or one named by x-amz-trailer (inTrailer true,
// value still unknown). S3 allows at most one, and x-amz-sdk-checksum-algorithm,
// when sent, must name it.
func requestChecksum(h http.Header) (c *checksum, inTrailer bool, err error) {
	var found []*checksum
	for k, vs := range h {
		alg, ok := checksumHeaderAlg(k)
		if !ok {
			continue
		}
		c, err := newChecksum(alg)
		if err != nil {
			return nil, false, err
		}
		if len(vs) != 1 {
			return nil, false, fmt.Errorf("%w: %s sent %d times", ErrInvalidChecksum, k, len(vs))
		}
		if err := c.setWant(vs[0]); err != nil {
			return nil, false, err
		}
		found = append(found, c)
	}
	tc, err := trailerChecksum(h)
	if err != nil {
		return nil, false, err
	}
	if tc != nil {
		found = append(found, tc)
	}
	if len(found) > 1 {
		return nil, false, fmt.Errorf("%w: more than one checksum", ErrInvalidChecksum)
	}
	if len(found) == 1 {
		c = found[0]
	}
	if sdk := h.Get("X-Amz-Sdk-Checksum-Algorithm"); sdk != "" {
		if c == nil || !strings.EqualFold(sdk, c.alg) {
			return nil, false, fmt.Errorf("%w: x-amz-sdk-checksum-algorithm %.32q without its checksum", ErrInvalidChecksum, sdk)
		}
	}
	return c, tc != nil, nil
}

// checksumHeaderAlg returns the algorithm of a checksum-carrying header.
func checksumHeaderAlg(name string) (string, bool) {
	ln := strings.ToLower(name)
	if !strings.HasPrefix(ln, checksumPrefix) {
		return "", false
	}
	alg := ln[len(checksumPrefix):]
	return alg, !checksumNotValue[alg]
}

// trailerChecksum reads x-amz-trailer, which may name one checksum.
func trailerChecksum(h http.Header) (*checksum, error) {
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
		return nil, fmt.Errorf("%w: x-amz-trailer names %d trailers", ErrInvalidChecksum, len(names))
	}
	alg, ok := checksumHeaderAlg(names[0])
	if !ok {
		return nil, fmt.Errorf("%w: trailer %.64q is not a checksum", ErrInvalidChecksum, names[0])
	}
	return newChecksum(alg)
}
