package object

import (
	"fmt"
	"hash"
	"io"
	"maps"
	"strings"

	"tessera/checksum"
	"tessera/meta"
)

// Every object has a checksum, as in S3: the one its writer declared, or
// the default CRC64NVME the layer computes while the bytes stream
// through. It lives in the record's headers (X-Amz-Checksum-<ALGORITHM>
// and X-Amz-Checksum-Type), each part's in the part record; the gateway
// decides which of them a response shows.

// ChecksumSource is implemented by a request body whose checksum the
// gateway validates while it is read.
type ChecksumSource interface {
	// DeclaredChecksum is the algorithm of the checksum the request
	// carries, known before the body is read; "" when it carries none.
	DeclaredChecksum() checksum.Algorithm
	// Checksums are the validated values (lowercase algorithm → base64),
	// final once the body returned io.EOF.
	Checksums() map[string]string
}

// Stored object headers of the object checksum.
const (
	checksumHeaderPrefix = meta.ChecksumHeaderPrefix
	checksumTypeHeader   = meta.ChecksumTypeHeader
)

// ChecksumInfo is an object's checksum as S3 reports it.
type ChecksumInfo struct {
	Algorithm checksum.Algorithm
	Type      checksum.Type
	Value     string // base64; COMPOSITE values end in "-N"
}

// IsZero reports an object stored without a checksum (written before
// every object had one).
func (c ChecksumInfo) IsZero() bool { return c.Algorithm == "" }

// storedChecksum reads the object checksum from a record's headers. A
// record without a type predates types and is FULL_OBJECT.
func storedChecksum(h map[string]string) ChecksumInfo {
	for k, v := range h {
		name, ok := strings.CutPrefix(k, checksumHeaderPrefix)
		if !ok || k == checksumTypeHeader {
			continue
		}
		if alg, ok := checksum.Parse(name); ok {
			t := checksum.Type(h[checksumTypeHeader])
			if t == "" {
				t = checksum.FullObject
			}
			return ChecksumInfo{Algorithm: alg, Type: t, Value: v}
		}
	}
	return ChecksumInfo{}
}

// withChecksum returns a copy of h with c as its only checksum, leaving
// h (often the request's or the upload record's map) alone.
func withChecksum(h map[string]string, c ChecksumInfo) map[string]string {
	out := make(map[string]string, len(h)+2)
	for k, v := range h {
		if !strings.HasPrefix(k, checksumHeaderPrefix) {
			out[k] = v
		}
	}
	if !c.IsZero() {
		out[checksumHeaderPrefix+string(c.Algorithm)] = c.Value
		out[checksumTypeHeader] = string(c.Type)
	}
	return out
}

// declaredOf is the checksum algorithm body declares ("" none).
func declaredOf(body io.Reader) checksum.Algorithm {
	if src, ok := body.(ChecksumSource); ok {
		return src.DeclaredChecksum()
	}
	return ""
}

// sumTracker learns a body's checksums: the declared one from its
// ChecksumSource once the body is drained, and the wanted algorithm's,
// hashed as the bytes pass unless it is the declared one.
type sumTracker struct {
	src      ChecksumSource
	declared checksum.Algorithm
	alg      checksum.Algorithm // wanted
	h        hash.Hash          // nil when alg is declared or empty
}

func newSumTracker(body io.Reader, want checksum.Algorithm) *sumTracker {
	t := &sumTracker{alg: want}
	if src, ok := body.(ChecksumSource); ok {
		t.src = src
		t.declared = src.DeclaredChecksum()
	}
	if want != "" && want != t.declared {
		t.h = want.New()
	}
	return t
}

func (t *sumTracker) Write(p []byte) (int, error) {
	if t.h != nil {
		t.h.Write(p)
	}
	return len(p), nil
}

// sums returns the checksums of the drained body: the declared one and
// the wanted one (lowercase algorithm → base64).
func (t *sumTracker) sums() map[string]string {
	out := map[string]string{}
	if t.src != nil {
		for k, v := range t.src.Checksums() {
			if a, ok := checksum.Parse(k); ok && v != "" {
				out[a.Lower()] = v
			}
		}
	}
	if t.h != nil {
		out[t.alg.Lower()] = checksum.Encode(t.h.Sum(nil))
	}
	return out
}

// object is the FULL_OBJECT checksum of the wanted algorithm.
func (t *sumTracker) object() (ChecksumInfo, error) {
	if t.alg == "" {
		return ChecksumInfo{}, nil
	}
	v, ok := t.sums()[t.alg.Lower()]
	if !ok {
		return ChecksumInfo{}, fmt.Errorf("body declared a %s checksum but none was validated", t.alg)
	}
	return ChecksumInfo{Algorithm: t.alg, Type: checksum.FullObject, Value: v}, nil
}

// samePart reports whether two peers hold the same part version.
func samePart(a, b meta.Part) bool {
	return a.Number == b.Number && a.Size == b.Size && a.ETag == b.ETag && maps.Equal(a.Checksums, b.Checksums)
}
