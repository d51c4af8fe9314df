package gateway

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseCompleteChecksums(t *testing.T) {
	body := `<CompleteMultipartUpload>
	 <Part><PartNumber>1</PartNumber><ETag>"aa"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32><ChecksumSHA256> c2hh </ChecksumSHA256></Part>
	 <Part><PartNumber>2</PartNumber><ETag>bb</ETag></Part>
	 <Part><PartNumber>3</PartNumber><ETag>cc</ETag><ChecksumCRC32C>Yw==</ChecksumCRC32C><ChecksumCRC64NVME>bg==</ChecksumCRC64NVME><ChecksumSHA1>czE=</ChecksumSHA1></Part>
	</CompleteMultipartUpload>`
	parts, err := parseCompleteMultipart([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"crc32": "AAAAAA==", "sha256": "c2hh"},
		nil,
		{"crc32c": "Yw==", "crc64nvme": "bg==", "sha1": "czE="},
	}
	for i, w := range want {
		if !maps.Equal(parts[i].Checksums, w) {
			t.Errorf("part %d checksums %v, want %v", i+1, parts[i].Checksums, w)
		}
	}
}

func TestCompleteResultChecksums(t *testing.T) {
	cases := []struct {
		headers map[string]string
		want    []string
		absent  []string
	}{
		{map[string]string{"X-Amz-Checksum-CRC32": "q83vEg==-2", "X-Amz-Checksum-Type": "COMPOSITE"},
			[]string{"<ChecksumCRC32>q83vEg==-2</ChecksumCRC32>", "<ChecksumType>COMPOSITE</ChecksumType>"},
			[]string{"ChecksumSHA256"}},
		{map[string]string{"Cache-Control": "x"}, nil, []string{"Checksum"}},
	}
	for _, tc := range cases {
		rec := newRecorderXML(t, completeMultipartUploadResult{Bucket: "b", Key: "k", ETag: `"e"`,
			completeResultChecksums: resultChecksums(tc.headers)})
		for _, w := range tc.want {
			if !strings.Contains(rec, w) {
				t.Errorf("missing %s in %s", w, rec)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(rec, a) {
				t.Errorf("unexpected %s in %s", a, rec)
			}
		}
	}
}

func newRecorderXML(t *testing.T, v any) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := writeXML(rec, http.StatusOK, v); err != nil {
		t.Fatal(err)
	}
	return rec.Body.String()
}
