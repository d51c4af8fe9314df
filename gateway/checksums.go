package gateway

import (
	"errors"
	"hash"
	"io"
	"net/http"
	"strings"

	"tessera/checksum"
	"tessera/gateway/sigv4"
	"tessera/object"
)

// verifiedBody hands the object layer a request body with the checksum
// the Authenticator validates as it is read (object.ChecksumSource).
type verifiedBody struct {
	io.Reader
	req *http.Request
}

var _ object.ChecksumSource = verifiedBody{}

func (b verifiedBody) DeclaredChecksum() checksum.Algorithm { return authResult(b.req).Declared }
func (b verifiedBody) Checksums() map[string]string         { return authResult(b.req).Checksums }

// checksumsXML are the ChecksumXXX elements S3 puts in results and part
// listings, one per algorithm.
type checksumsXML struct {
	CRC32     string `xml:"ChecksumCRC32,omitempty"`
	CRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	CRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	SHA1      string `xml:"ChecksumSHA1,omitempty"`
	SHA256    string `xml:"ChecksumSHA256,omitempty"`
	SHA512    string `xml:"ChecksumSHA512,omitempty"`
	MD5       string `xml:"ChecksumMD5,omitempty"`
	XXHASH64  string `xml:"ChecksumXXHASH64,omitempty"`
	XXHASH3   string `xml:"ChecksumXXHASH3,omitempty"`
	XXHASH128 string `xml:"ChecksumXXHASH128,omitempty"`
}

// fields lists the elements by algorithm, in checksum.All's order.
func (c *checksumsXML) fields() []*string {
	return []*string{&c.CRC32, &c.CRC32C, &c.CRC64NVME, &c.SHA1, &c.SHA256, &c.SHA512, &c.MD5, &c.XXHASH64, &c.XXHASH3, &c.XXHASH128}
}

// checksumsFrom renders sums (lowercase algorithm → value).
func checksumsFrom(sums map[string]string) checksumsXML {
	var c checksumsXML
	for i, f := range c.fields() {
		*f = sums[checksum.All[i].Lower()]
	}
	return c
}

// toMap is the non-empty elements by lowercase algorithm, trimmed.
func (c checksumsXML) toMap() map[string]string {
	out := map[string]string{}
	for i, f := range c.fields() {
		if v := strings.TrimSpace(*f); v != "" {
			out[checksum.All[i].Lower()] = v
		}
	}
	return out
}

// objectChecksumXML is an object's checksum and its type in a result.
type objectChecksumXML struct {
	checksumsXML
	Type string `xml:"ChecksumType,omitempty"`
}

func objectChecksumOf(c object.ChecksumInfo) objectChecksumXML {
	if c.IsZero() {
		return objectChecksumXML{}
	}
	return objectChecksumXML{checksumsXML: checksumsFrom(map[string]string{c.Algorithm.Lower(): c.Value}), Type: string(c.Type)}
}

// setChecksumHeaders writes sums as x-amz-checksum-* response headers.
func setChecksumHeaders(h http.Header, sums map[string]string) {
	for name, v := range sums {
		if a, ok := checksum.Parse(name); ok && v != "" {
			h.Set(a.Header(), v)
		}
	}
}

// setObjectChecksum writes an object checksum and its type.
func setObjectChecksum(h http.Header, c object.ChecksumInfo) {
	if c.IsZero() {
		return
	}
	h.Set(c.Algorithm.Header(), c.Value)
	h.Set("X-Amz-Checksum-Type", string(c.Type))
}

// readChecksum is the checksum a GET or HEAD answers with (mode ENABLED):
// the object's for the whole object; none for a byte range, whose bytes
// it does not describe; for partNumber, the part's own where it has one —
// a single-part object's, or a COMPOSITE object's part checksum. A
// FULL_OBJECT multipart object's parts have no checksum to show.
func readChecksum(p getRequest, info object.ObjectInfo) object.ChecksumInfo {
	c := info.Checksum
	switch {
	case c.IsZero() || p.hasRange:
		return object.ChecksumInfo{}
	case p.partNumber == 0 || info.Parts <= 1:
		return c
	case c.Type == checksum.Composite && p.partNumber <= len(info.PartChecksums):
		if v := info.PartChecksums[p.partNumber-1]; v != "" {
			return object.ChecksumInfo{Algorithm: c.Algorithm, Type: c.Type, Value: v}
		}
	}
	return object.ChecksumInfo{}
}

// parseChecksumAlgorithm reads x-amz-checksum-algorithm
// (CreateMultipartUpload, CopyObject); "" when absent.
func parseChecksumAlgorithm(h http.Header) (checksum.Algorithm, error) {
	v := h.Get("X-Amz-Checksum-Algorithm")
	if v == "" {
		return "", nil
	}
	a, ok := checksum.Parse(v)
	if !ok {
		return "", apiErrf(errInvalidRequest, "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")
	}
	return a, nil
}

// parseChecksumType reads x-amz-checksum-type; "" when absent.
func parseChecksumType(h http.Header) (checksum.Type, error) {
	v := h.Get("X-Amz-Checksum-Type")
	if v == "" {
		return "", nil
	}
	t, ok := checksum.ParseType(v)
	if !ok {
		return "", invalidHeaderValue("x-amz-checksum-type")
	}
	return t, nil
}

// parseMultipartChecksum reads CreateMultipartUpload's algorithm and type.
func parseMultipartChecksum(h http.Header) (checksum.Algorithm, checksum.Type, error) {
	alg, err := parseChecksumAlgorithm(h)
	if err != nil {
		return "", "", err
	}
	typ, err := parseChecksumType(h)
	if err != nil {
		return "", "", err
	}
	switch {
	case typ != "" && alg == "":
		return "", "", apiErrf(errInvalidRequest, "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
	case alg != "" && typ == "":
		typ = alg.DefaultType()
	case alg != "" && !alg.Allows(typ):
		return "", "", apiErrf(errInvalidRequest, "The %s checksum type cannot be used with the %s checksum algorithm.", typ, alg.Lower())
	}
	return alg, typ, nil
}

// parseCompleteChecksum reads CompleteMultipartUpload's object checksum
// headers: at most one x-amz-checksum-<algorithm>, whose value is a full
// checksum or a composite ("base64-N"), and x-amz-checksum-type.
func parseCompleteChecksum(h http.Header) (object.CompleteOptions, error) {
	var opts object.CompleteOptions
	typ, err := parseChecksumType(h)
	if err != nil {
		return opts, err
	}
	opts.Type = typ
	for _, a := range checksum.All {
		vs := h.Values(a.Header())
		if len(vs) == 0 {
			continue
		}
		if !opts.Checksum.IsZero() || len(vs) > 1 {
			return opts, apiErrf(errInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		if _, _, err := a.DecodeComposite(vs[0]); err != nil {
			return opts, invalidHeaderValue(a.Header())
		}
		opts.Checksum = object.ChecksumInfo{Algorithm: a, Value: vs[0]}
	}
	return opts, nil
}

// parsePartChecksums validates a CompleteMultipartUpload part's checksum
// elements: at most one, valid base64 of its algorithm's size.
func parsePartChecksums(c checksumsXML) (map[string]string, error) {
	sums := c.toMap()
	if len(sums) == 0 {
		return nil, nil
	}
	bad := ""
	for _, a := range checksum.All {
		if v, ok := sums[a.Lower()]; ok {
			bad += string(a) + ":" + v + ";"
			if _, err := a.Decode(v); err != nil && len(sums) == 1 {
				bad = v
			} else if err == nil && len(sums) == 1 {
				return sums, nil
			}
		}
	}
	return nil, withFields(apiErrf(errInvalidArgument, "Invalid Base64 or multiple checksums present in request"),
		errorField{"ArgumentName", "Checksum"}, errorField{"ArgumentValue", bad})
}

func invalidHeaderValue(name string) error {
	return apiErrf(errInvalidRequest, "Value for %s header is invalid.", name)
}

// checksumErr renders the checksum errors of the layers below with S3's
// messages; nil for any other error.
func checksumErr(err error) error {
	var ce *sigv4.ChecksumError
	if errors.As(err, &ce) {
		return verifierChecksumErr(ce)
	}
	var oe *object.ChecksumError
	if errors.As(err, &oe) {
		return multipartChecksumErr(oe)
	}
	return nil
}

func verifierChecksumErr(ce *sigv4.ChecksumError) error {
	switch ce.Problem {
	case sigv4.UnknownChecksumHeader:
		return apiErrf(errInvalidRequest, "The algorithm type you specified in x-amz-checksum- header is invalid.")
	case sigv4.InvalidChecksumValue:
		return invalidHeaderValue(ce.Name)
	case sigv4.InvalidTrailerValue:
		return apiErrf(errInvalidRequest, "Value for %s trailing header is invalid.", ce.Name)
	case sigv4.MultipleChecksums:
		return apiErrf(errInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	case sigv4.SDKAlgorithmWithout:
		return apiErrf(errInvalidRequest, "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.")
	case sigv4.SDKAlgorithmMismatch:
		return invalidHeaderValue("x-amz-sdk-checksum-algorithm")
	case sigv4.UnsupportedTrailer:
		return apiErrf(errInvalidRequest, "The value specified in the x-amz-trailer header is not supported")
	case sigv4.ChecksumMismatch:
		return apiErrf(errBadDigest, "The %s you specified did not match the calculated checksum.", ce.Name)
	}
	return apiErr(errInvalidChecksum)
}

func multipartChecksumErr(e *object.ChecksumError) error {
	switch e.Kind {
	case object.ChecksumAlgorithmMismatch:
		return apiErrf(errInvalidRequest, "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", e.Algorithm, e.Other)
	case object.ChecksumTypeMismatch:
		return apiErrf(errInvalidRequest, "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", e.Type)
	case object.PartChecksumMissing:
		return apiErrf(errInvalidRequest, "The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", e.Algorithm.Lower(), e.Part)
	case object.PartChecksumUnknown:
		return apiErrf(errBadDigest, "The %s you specified for part %d did not match what we received.", e.Algorithm.Lower(), e.Part)
	case object.ObjectChecksumMismatch:
		return apiErrf(errBadDigest, "The %s you specified did not match the calculated checksum.", e.Algorithm)
	}
	return apiErr(errInvalidChecksum)
}

// formChecksum is a POST upload's file checked against the checksum its
// form supplies (an x-amz-checksum-<algorithm> field; none: computed in
// the named algorithm), which the object layer then stores like a PUT's
// header checksum.
type formChecksum struct {
	r    io.Reader
	alg  checksum.Algorithm
	want string
	h    hash.Hash
	ok   bool
}

var _ object.ChecksumSource = (*formChecksum)(nil)

// newFormChecksum wraps file when fields supply a checksum (at most one,
// with a valid value, as for headers) or name an algorithm in
// x-amz-checksum-algorithm, whose checksum the upload then gets.
func newFormChecksum(file io.Reader, fields map[string]string) (io.Reader, error) {
	var fc *formChecksum
	for _, a := range checksum.All {
		v, ok := fields[a.Header()]
		if !ok {
			continue
		}
		if fc != nil {
			return nil, apiErrf(errInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		if _, err := a.Decode(v); err != nil {
			return nil, invalidHeaderValue(a.Header())
		}
		fc = &formChecksum{r: file, alg: a, want: v, h: a.New()}
	}
	if name, ok := fields["x-amz-checksum-algorithm"]; ok {
		a, valid := checksum.Parse(name)
		switch {
		case !valid || (fc != nil && fc.alg != a):
			return nil, invalidHeaderValue("x-amz-checksum-algorithm")
		case fc == nil:
			fc = &formChecksum{r: file, alg: a, h: a.New()}
		}
	}
	if fc == nil {
		return file, nil
	}
	return fc, nil
}

func (f *formChecksum) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.h.Write(p[:n])
	if err == io.EOF {
		got := checksum.Encode(f.h.Sum(nil))
		if f.want != "" && got != f.want {
			return n, apiErrf(errBadDigest, "The %s you specified did not match the calculated checksum.", f.alg)
		}
		f.want, f.ok = got, true
	}
	return n, err
}

func (f *formChecksum) DeclaredChecksum() checksum.Algorithm { return f.alg }

func (f *formChecksum) Checksums() map[string]string {
	if !f.ok {
		return nil
	}
	return map[string]string{f.alg.Lower(): f.want}
}
