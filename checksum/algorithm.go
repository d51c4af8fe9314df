package checksum

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"
)

// Algorithm is an S3 checksum algorithm by its canonical upper-case name
// ("CRC32", "SHA256", ...), as x-amz-checksum-algorithm and the XML
// ChecksumAlgorithm elements spell it. The zero value is no algorithm.
type Algorithm string

// The algorithms S3 accepts.
const (
	CRC32     Algorithm = "CRC32"
	CRC32C    Algorithm = "CRC32C"
	CRC64NVME Algorithm = "CRC64NVME"
	SHA1      Algorithm = "SHA1"
	SHA256    Algorithm = "SHA256"
	SHA512    Algorithm = "SHA512"
	MD5       Algorithm = "MD5"
	XXHASH64  Algorithm = "XXHASH64"
	XXHASH3   Algorithm = "XXHASH3"
	XXHASH128 Algorithm = "XXHASH128"
)

// Default is the algorithm S3 computes for an object uploaded without one.
const Default = CRC64NVME

// ErrInvalidValue reports a checksum value that is not valid base64 of
// its algorithm's digest size (or, for a composite, lacks a part count).
var ErrInvalidValue = errors.New("invalid checksum value")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type spec struct {
	size int
	new  func() hash.Hash
}

var specs = map[Algorithm]spec{
	CRC32:     {4, func() hash.Hash { return crc32.NewIEEE() }},
	CRC32C:    {4, func() hash.Hash { return crc32.New(castagnoli) }},
	CRC64NVME: {8, func() hash.Hash { return crc64nvme.New() }},
	SHA1:      {sha1.Size, sha1.New},
	SHA256:    {sha256.Size, sha256.New},
	SHA512:    {sha512.Size, sha512.New},
	MD5:       {md5.Size, md5.New},
	XXHASH64:  {8, func() hash.Hash { return xxhash.New() }},
	XXHASH3:   {8, func() hash.Hash { return xxh3.New() }},
	XXHASH128: {16, func() hash.Hash { return xxh3.New128() }},
}

// All lists the algorithms in the order S3's documentation names them.
var All = []Algorithm{CRC32, CRC32C, CRC64NVME, SHA1, SHA256, SHA512, MD5, XXHASH64, XXHASH3, XXHASH128}

// Parse returns the algorithm named by s in any case ("crc32c", "CRC32C").
func Parse(s string) (Algorithm, bool) {
	a := Algorithm(strings.ToUpper(s))
	_, ok := specs[a]
	return a, ok
}

// Valid reports whether a is a known algorithm.
func (a Algorithm) Valid() bool { _, ok := specs[a]; return ok }

// New returns a fresh hash of a. It panics on an unknown algorithm:
// callers Parse first.
func (a Algorithm) New() hash.Hash {
	s, ok := specs[a]
	if !ok {
		panic(fmt.Sprintf("checksum: unknown algorithm %q", string(a)))
	}
	return s.new()
}

// Size is the digest length in bytes (0 for an unknown algorithm).
func (a Algorithm) Size() int { return specs[a].size }

// Lower is the lower-case name used in header names ("crc32c").
func (a Algorithm) Lower() string { return strings.ToLower(string(a)) }

// Header is the request and response header carrying a's value
// ("x-amz-checksum-crc32c").
func (a Algorithm) Header() string { return "x-amz-checksum-" + a.Lower() }

// Encode renders a digest as S3 does: standard base64.
func Encode(sum []byte) string { return base64.StdEncoding.EncodeToString(sum) }

// Decode parses a full-object value of a: strict base64 of exactly a's
// digest size.
func (a Algorithm) Decode(v string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(b) != a.Size() || a.Size() == 0 {
		return nil, fmt.Errorf("%w: %s value %.80q", ErrInvalidValue, a, v)
	}
	return b, nil
}

// Sum returns the encoded checksum of data.
func (a Algorithm) Sum(data []byte) string {
	h := a.New()
	h.Write(data)
	return Encode(h.Sum(nil))
}
