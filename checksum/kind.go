package checksum

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is how a multipart object's checksum derives from its parts; a
// single PUT's checksum is always FULL_OBJECT.
type Type string

const (
	// FullObject is the checksum of the object's bytes. Multipart uploads
	// can have one only for the CRCs, which combine linearly.
	FullObject Type = "FULL_OBJECT"
	// Composite is the checksum of the concatenated raw part checksums,
	// suffixed "-N" with the part count. Every algorithm but CRC64NVME.
	Composite Type = "COMPOSITE"
)

// ParseType reads x-amz-checksum-type in any case.
func ParseType(s string) (Type, bool) {
	switch t := Type(strings.ToUpper(s)); t {
	case FullObject, Composite:
		return t, true
	}
	return "", false
}

// Allows reports whether a multipart upload may use algorithm a with
// type t.
func (a Algorithm) Allows(t Type) bool {
	switch t {
	case FullObject:
		return a == CRC32 || a == CRC32C || a == CRC64NVME
	case Composite:
		return a.Valid() && a != CRC64NVME
	}
	return false
}

// DefaultType is the type a multipart upload gets when it names only an
// algorithm: FULL_OBJECT for CRC64NVME, COMPOSITE for the others.
func (a Algorithm) DefaultType() Type {
	if a == CRC64NVME {
		return FullObject
	}
	return Composite
}

// CompositeOf is the COMPOSITE checksum of parts' raw checksums, in part
// order: Encode(hash(sum1 || sum2 || ...)) + "-N".
func (a Algorithm) CompositeOf(parts [][]byte) string {
	h := a.New()
	for _, p := range parts {
		h.Write(p)
	}
	return Encode(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
}

// DecodeComposite parses a composite value "base64-N" (the suffix may be
// left out, as clients that send only the digest do) and returns the
// digest and N (0 when absent).
func (a Algorithm) DecodeComposite(v string) ([]byte, int, error) {
	digest, count, hasCount := strings.Cut(v, "-")
	n := 0
	if hasCount {
		var err error
		n, err = strconv.Atoi(count)
		if err != nil || n < 1 || strconv.Itoa(n) != count {
			return nil, 0, fmt.Errorf("%w: %s composite %.80q", ErrInvalidValue, a, v)
		}
	}
	sum, err := a.Decode(digest)
	if err != nil {
		return nil, 0, err
	}
	return sum, n, nil
}
