package meta

import "testing"

func TestEntryOfChecksum(t *testing.T) {
	cases := []struct {
		name     string
		headers  map[string]string
		alg, typ string
	}{
		{"none", nil, "", ""},
		{"other headers only", map[string]string{"Cache-Control": "no-cache"}, "", ""},
		{"full object", map[string]string{"X-Amz-Checksum-CRC64NVME": "AAAAAAAAAAA=", "X-Amz-Checksum-Type": "FULL_OBJECT"}, "CRC64NVME", "FULL_OBJECT"},
		{"composite", map[string]string{"X-Amz-Checksum-SHA256": "x-3", "X-Amz-Checksum-Type": "COMPOSITE"}, "SHA256", "COMPOSITE"},
		{"before types were recorded", map[string]string{"X-Amz-Checksum-CRC32": "AAAAAA=="}, "CRC32", "FULL_OBJECT"},
		{"the default marker is no algorithm", map[string]string{"X-Amz-Checksum-Default": "1", "X-Amz-Checksum-CRC64NVME": "AAAAAAAAAAA=", "X-Amz-Checksum-Type": "FULL_OBJECT"}, "CRC64NVME", "FULL_OBJECT"},
		{"a type without a checksum", map[string]string{"X-Amz-Checksum-Type": "FULL_OBJECT"}, "", ""},
	}
	for _, c := range cases {
		e := EntryOf(&Object{Key: "k", Headers: c.headers})
		if e.ChecksumAlgorithm != c.alg || e.ChecksumType != c.typ {
			t.Errorf("%s: %q %q, want %q %q", c.name, e.ChecksumAlgorithm, e.ChecksumType, c.alg, c.typ)
		}
	}
}
