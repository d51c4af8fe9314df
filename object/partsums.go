package object

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"strconv"
	"strings"

	"tessera/meta"
)

// ChecksumSource is implemented by a part body that learned validated
// x-amz-checksum-* values (lowercase algorithm → base64) while it was
// read; PutPart asks it once the body is drained and keeps the values
// with the part record.
type ChecksumSource interface {
	Checksums() map[string]string
}

// Stored object headers of a multipart object's composite checksum; the
// same names the gateway stores a single PUT's checksums under.
const (
	checksumHeaderPrefix = "X-Amz-Checksum-"
	checksumTypeHeader   = "X-Amz-Checksum-Type"
)

// compositeHashes are the algorithms S3 builds a COMPOSITE checksum for:
// the hash of the concatenated raw part checksums. CRC64NVME objects are
// FULL_OBJECT only in S3, so none is derived for them here.
var compositeHashes = map[string]func() hash.Hash{
	"crc32":  func() hash.Hash { return crc32.NewIEEE() },
	"crc32c": func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"sha1":   sha1.New,
	"sha256": sha256.New,
}

// knownChecksums are the algorithms a part checksum may name.
var knownChecksums = map[string]bool{"crc32": true, "crc32c": true, "crc64nvme": true, "sha1": true, "sha256": true}

// partChecksums returns the checksums r validated, nil when it has none.
func partChecksums(r io.Reader) map[string]string {
	cs, ok := r.(ChecksumSource)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for k, v := range cs.Checksums() {
		if knownChecksums[k] && v != "" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// samePart reports whether two peers hold the same part version.
func samePart(a, b meta.Part) bool {
	return a.Number == b.Number && a.Size == b.Size && a.ETag == b.ETag && maps.Equal(a.Checksums, b.Checksums)
}

// checkPartChecksums fails with ErrInvalidPart when a CompleteMultipart
// entry names a checksum its part was not uploaded with, or a different
// value.
func checkPartChecksums(want []CompletePart, chosen []meta.Part) error {
	for i, cp := range want {
		for algo, sum := range cp.Checksums {
			if got, ok := chosen[i].Checksums[algo]; !ok || got != sum {
				return fmt.Errorf("%w: part %d checksum %s %q does not match %q", ErrInvalidPart, cp.Number, algo, sum, got)
			}
		}
	}
	return nil
}

// compositeChecksums returns the stored headers of the COMPOSITE checksum
// of parts, for the one algorithm every part carries ("" when none or
// several do: S3 objects have at most one checksum algorithm).
func compositeChecksums(parts []meta.Part) map[string]string {
	var algo string
	for a := range compositeHashes {
		all := true
		for _, p := range parts {
			if _, ok := p.Checksums[a]; !ok {
				all = false
				break
			}
		}
		if all {
			if algo != "" {
				return nil
			}
			algo = a
		}
	}
	if algo == "" {
		return nil
	}
	h := compositeHashes[algo]()
	for _, p := range parts {
		raw, err := base64.StdEncoding.DecodeString(p.Checksums[algo])
		if err != nil {
			return nil
		}
		h.Write(raw)
	}
	sum := base64.StdEncoding.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
	return map[string]string{
		checksumHeaderPrefix + strings.ToUpper(algo): sum,
		checksumTypeHeader:                           "COMPOSITE",
	}
}

// withComposite returns o's headers plus the composite checksum of its
// parts, copying so the upload record's map is left alone.
func withComposite(headers map[string]string, parts []meta.Part) map[string]string {
	extra := compositeChecksums(parts)
	if len(extra) == 0 {
		return headers
	}
	out := make(map[string]string, len(headers)+len(extra))
	maps.Copy(out, headers)
	maps.Copy(out, extra)
	return out
}
