package object

import (
	"fmt"
	"io"

	"tessera/checksum"
	"tessera/meta"
)

// A multipart upload fixes its object checksum at creation: an algorithm
// and a type (COMPOSITE or FULL_OBJECT), or none, in which case the
// object gets S3's default, a FULL_OBJECT CRC64NVME. Every part records a
// checksum of that algorithm — the client's, or one computed over the
// part's bytes — so Complete derives the object's from the parts alone.

// ChecksumErrorKind names a checksum rule a multipart request broke.
type ChecksumErrorKind int

// The rules, with S3's message for each (the gateway renders them).
const (
	// ChecksumAlgorithmMismatch: a part's checksum is not the upload's
	// algorithm, or a COMPOSITE upload's part has none ("null").
	ChecksumAlgorithmMismatch ChecksumErrorKind = iota
	// ChecksumTypeMismatch: Complete names another type than the upload's.
	ChecksumTypeMismatch
	// PartChecksumMissing: Complete lists a part of a COMPOSITE upload
	// without the part's checksum.
	PartChecksumMissing
	// PartChecksumUnknown: Complete lists a part with a checksum of an
	// algorithm the part was not stored with (BadDigest).
	PartChecksumUnknown
	// ObjectChecksumMismatch: Complete's object checksum differs from the
	// one the parts give (BadDigest).
	ObjectChecksumMismatch
)

// ChecksumError is a multipart request that broke a checksum rule.
type ChecksumError struct {
	Kind ChecksumErrorKind
	// Algorithm is the upload's (or, for PartChecksumUnknown, the
	// request's); Other the request's, "null" when it sent none.
	Algorithm checksum.Algorithm
	Other     string
	Type      checksum.Type // the upload's
	Part      int
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("checksum rule %d: %s/%s type %s part %d", e.Kind, e.Algorithm, e.Other, e.Type, e.Part)
}

// uploadChecksum is the algorithm and type an upload's object gets.
func uploadChecksum(u *meta.Upload) (checksum.Algorithm, checksum.Type) {
	return checksum.Algorithm(u.ChecksumAlgorithm), checksum.Type(u.ChecksumType)
}

// partWants checks a part's declared checksum against the upload before
// the body is read, and returns the algorithm the part must record. A
// copied part's checksum is always the layer's to compute.
func partWants(u *meta.Upload, body io.Reader) (checksum.Algorithm, error) {
	alg, typ := uploadChecksum(u)
	declared := declaredOf(body)
	_, copied := body.(copiedBody)
	switch {
	case alg == "":
		return checksum.Default, nil
	case declared != "" && declared != alg:
		return "", &ChecksumError{Kind: ChecksumAlgorithmMismatch, Algorithm: alg, Other: string(declared)}
	case declared == "" && typ == checksum.Composite && !copied:
		// A composite is only as good as the clients' part checksums.
		return "", &ChecksumError{Kind: ChecksumAlgorithmMismatch, Algorithm: alg, Other: "null"}
	}
	return alg, nil
}

// visiblePartSums are the part checksums an UploadPart response echoes:
// the client's and the upload's algorithm, not the default an upload
// without one records for itself.
func visiblePartSums(u *meta.Upload, declared checksum.Algorithm, sums map[string]string) map[string]string {
	alg, _ := uploadChecksum(u)
	out := map[string]string{}
	for k, v := range sums {
		if k == declared.Lower() || (alg != "" && k == alg.Lower()) {
			out[k] = v
		}
	}
	return out
}

// CompleteOptions are CompleteMultipartUpload's checksum headers.
type CompleteOptions struct {
	// Checksum is the object checksum the request states (Algorithm and
	// Value; zero when none). Type is x-amz-checksum-type ("" none).
	Checksum ChecksumInfo
	Type     checksum.Type
	// ObjectSize, when set, is the object size the client states
	// (x-amz-mp-object-size); parts that sum to another size fail with a
	// SizeMismatchError and commit nothing.
	ObjectSize *int64
	// IfMatch and IfNoneMatch make the commit conditional on the key's
	// current version, as PutOptions' do for a PUT.
	IfMatch, IfNoneMatch string
	Current              CurrentFunc
	// VersionKey, when set, is the version key of the upload's key the
	// object is committed under: a new version in a versioned bucket.
	VersionKey string
}

// completeChecksum checks the request's part and object checksums
// against the chosen parts and returns the object's checksum.
func completeChecksum(u *meta.Upload, want []CompletePart, chosen []meta.Part, opts CompleteOptions) (ChecksumInfo, error) {
	alg, typ := uploadChecksum(u)
	if alg != "" && opts.Type != "" && opts.Type != typ {
		return ChecksumInfo{}, &ChecksumError{Kind: ChecksumTypeMismatch, Algorithm: alg, Type: typ}
	}
	if err := checkListedPartSums(alg, typ, want, chosen); err != nil {
		return ChecksumInfo{}, err
	}
	if alg == "" {
		// S3's default; a checksum the request states is ignored, as S3
		// does for an upload created without one.
		sum := derivedChecksum(checksum.Default, checksum.FullObject, chosen)
		sum.Default = !sum.IsZero()
		return sum, nil
	}
	sum := derivedChecksum(alg, typ, chosen)
	if sum.IsZero() {
		return sum, fmt.Errorf("%w: a part lacks its %s checksum", ErrInvalidPart, alg)
	}
	if opts.Checksum.IsZero() {
		return sum, nil
	}
	if opts.Checksum.Algorithm != alg {
		return ChecksumInfo{}, &ChecksumError{Kind: ChecksumAlgorithmMismatch, Algorithm: alg, Other: string(opts.Checksum.Algorithm)}
	}
	if !sameObjectSum(sum, opts.Checksum.Value, len(chosen)) {
		return ChecksumInfo{}, &ChecksumError{Kind: ObjectChecksumMismatch, Algorithm: alg, Type: typ}
	}
	return sum, nil
}

// checkListedPartSums: a checksum listed for a part must be the one the
// part was stored with; a COMPOSITE upload must list each part's.
func checkListedPartSums(alg checksum.Algorithm, typ checksum.Type, want []CompletePart, chosen []meta.Part) error {
	for i, cp := range want {
		for a, v := range cp.Checksums {
			stored, ok := chosen[i].Checksums[a]
			if !ok {
				pa, _ := checksum.Parse(a)
				return &ChecksumError{Kind: PartChecksumUnknown, Algorithm: pa, Part: cp.Number}
			}
			if stored != v {
				return fmt.Errorf("%w: part %d %s %q, stored %q", ErrInvalidPart, cp.Number, a, v, stored)
			}
		}
		if typ == checksum.Composite && cp.Checksums[alg.Lower()] == "" {
			return &ChecksumError{Kind: PartChecksumMissing, Algorithm: alg, Part: cp.Number}
		}
	}
	return nil
}

// derivedChecksum is the object checksum parts give, zero when a part
// lacks a valid alg checksum (parts stored before parts had them).
func derivedChecksum(alg checksum.Algorithm, typ checksum.Type, parts []meta.Part) ChecksumInfo {
	raw := make([][]byte, len(parts))
	sizes := make([]int64, len(parts))
	for i, p := range parts {
		b, err := alg.Decode(p.Checksums[alg.Lower()])
		if err != nil {
			return ChecksumInfo{}
		}
		raw[i], sizes[i] = b, p.Size
	}
	out := ChecksumInfo{Algorithm: alg, Type: typ}
	if typ == checksum.Composite {
		out.Value = alg.CompositeOf(raw)
		return out
	}
	sum, err := alg.Combine(raw, sizes)
	if err != nil {
		return ChecksumInfo{}
	}
	out.Value = checksum.Encode(sum)
	return out
}

// sameObjectSum compares a stated object checksum with the derived one;
// a composite may be stated with or without its "-N".
func sameObjectSum(sum ChecksumInfo, stated string, parts int) bool {
	if sum.Type != checksum.Composite {
		return stated == sum.Value
	}
	got, n, err := sum.Algorithm.DecodeComposite(stated)
	want, _, _ := sum.Algorithm.DecodeComposite(sum.Value)
	return err == nil && (n == 0 || n == parts) && checksum.Encode(got) == checksum.Encode(want)
}
