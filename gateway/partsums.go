package gateway

import (
	"io"
	"net/http"
	"strings"

	"tessera/object"
)

// partBody hands the object layer the checksums the Authenticator
// validated for an UploadPart body (object.ChecksumSource). They are
// final once the body returned io.EOF, which is when the layer asks.
type partBody struct {
	io.Reader
	req *http.Request
}

var _ object.ChecksumSource = partBody{}

func (b partBody) Checksums() map[string]string { return authResult(b.req).Checksums }

// completeChecksumsXML are the per-part checksum elements of a
// CompleteMultipartUpload body.
type completeChecksumsXML struct {
	CRC32     string `xml:"ChecksumCRC32"`
	CRC32C    string `xml:"ChecksumCRC32C"`
	CRC64NVME string `xml:"ChecksumCRC64NVME"`
	SHA1      string `xml:"ChecksumSHA1"`
	SHA256    string `xml:"ChecksumSHA256"`
}

func (c completeChecksumsXML) toMap() map[string]string {
	out := map[string]string{}
	for algo, v := range map[string]string{"crc32": c.CRC32, "crc32c": c.CRC32C, "crc64nvme": c.CRC64NVME, "sha1": c.SHA1, "sha256": c.SHA256} {
		if v = strings.TrimSpace(v); v != "" {
			out[algo] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// completeResultChecksums are the checksum elements of a
// CompleteMultipartUploadResult.
type completeResultChecksums struct {
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
	ChecksumType      string `xml:"ChecksumType,omitempty"`
}

// resultChecksums reads the stored object checksums of a completed upload.
func resultChecksums(headers map[string]string) completeResultChecksums {
	get := func(algo string) string { return headers[checksumHeaderPrefix+strings.ToUpper(algo)] }
	return completeResultChecksums{
		ChecksumCRC32: get("crc32"), ChecksumCRC32C: get("crc32c"), ChecksumCRC64NVME: get("crc64nvme"),
		ChecksumSHA1: get("sha1"), ChecksumSHA256: get("sha256"), ChecksumType: headers[checksumHeaderPrefix+"Type"],
	}
}
