package gateway

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"testing"
)

func TestGetObjectAttributes(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k", body: "attributes"})
	for _, c := range []struct {
		attrs  string
		status int
		code   string
	}{
		{"", http.StatusBadRequest, "InvalidRequest"},
		{"ETag,Bogus", http.StatusBadRequest, "InvalidArgument"},
		{"ETag, ObjectSize,StorageClass,Checksum", http.StatusOK, ""},
	} {
		rec := do(h, req{method: http.MethodGet, target: "/bkt/k?attributes", header: map[string]string{"X-Amz-Object-Attributes": c.attrs}})
		if rec.Code != c.status {
			t.Fatalf("%q: %d %s", c.attrs, rec.Code, rec.Body.String())
		}
		if c.code != "" {
			if got := errorCode(t, rec); got != c.code {
				t.Fatalf("%q: code %s", c.attrs, got)
			}
			continue
		}
		var out struct {
			ETag         string
			ObjectSize   int64
			StorageClass string
			Checksum     struct {
				ChecksumCRC64NVME string
				ChecksumType      string
			}
			ObjectParts *struct{}
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if out.ETag != md5Hex("attributes") || out.ObjectSize != 10 || out.StorageClass != "STANDARD" ||
			out.Checksum.ChecksumType != "FULL_OBJECT" || out.Checksum.ChecksumCRC64NVME == "" || out.ObjectParts != nil {
			t.Fatalf("%q: %+v", c.attrs, out)
		}
		if rec.Header().Get("Last-Modified") == "" {
			t.Fatal("no Last-Modified")
		}
	}
	rec := do(h, req{method: http.MethodGet, target: "/nobkt/k?attributes"})
	if rec.Code != http.StatusNotFound || errorCode(t, rec) != "NoSuchBucket" {
		t.Fatalf("missing bucket, no attributes: %d %s", rec.Code, rec.Body.String())
	}
	rec = do(h, req{method: http.MethodGet, target: "/bkt/missing?attributes", header: map[string]string{"X-Amz-Object-Attributes": "ETag"}})
	if rec.Code != http.StatusNotFound || errorCode(t, rec) != "NoSuchKey" {
		t.Fatalf("missing key: %d %s", rec.Code, rec.Body.String())
	}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
