package gateway

import (
	"net/http"
	"testing"
)

func TestUploadPartCopyRefusals(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"src": "0123456789"})
	id := createUpload(t, h, "/bkt/k", nil)
	target := "/bkt/k?partNumber=1&uploadId=" + id
	before := be.mutations()
	const rangeMsg = "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"
	for _, rng := range []string{"byte=1-2", "bytes=invalid-range", "bytes=5-2", "bytes=-2-300", "bytes=aa-12", "bytes=12-aa", "bytes=bb-", "bytes=3-"} {
		rec := do(h, req{method: http.MethodPut, target: target,
			header: map[string]string{"X-Amz-Copy-Source": "bkt/src", "X-Amz-Copy-Source-Range": rng}})
		expectElems(t, rec, http.StatusBadRequest, map[string]string{
			"Code": "InvalidArgument", "Message": rangeMsg, "ArgumentName": "x-amz-copy-source-range", "ArgumentValue": rng,
		})
	}
	// S3 looks the destination bucket up before the copy source.
	expect(t, do(h, req{method: http.MethodPut, target: "/nobkt/k?partNumber=1&uploadId=x",
		header: map[string]string{"X-Amz-Copy-Source": "Copy-Source"}}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodPut, target: target,
		header: map[string]string{"X-Amz-Copy-Source": "Copy-Source"}}), http.StatusBadRequest, "InvalidArgument")
	if be.mutations() != before {
		t.Error("a refused part copy changed the backend")
	}
}
