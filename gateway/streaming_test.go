package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// unsignedStreamingPut is a PUT signed for STREAMING-UNSIGNED-PAYLOAD-TRAILER
// with body as its aws-chunked encoding.
func unsignedStreamingPut(t *testing.T, target, body string, headers map[string]string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPut, target, strings.NewReader(body))
	r.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}
	if err := s.SignHTTP(t.Context(), creds, r, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStreamingAnswers: aws-chunked bodies S3 refuses, rendered with S3's
// code, message and elements, and nothing stored.
func TestStreamingAnswers(t *testing.T) {
	be, h := v2Gateway(t)
	be.buckets["bkt"] = &fakeBucket{objects: map[string]*fakeObject{}}
	frame := func(sizes ...int) (string, string) {
		var b strings.Builder
		n := 0
		for _, s := range sizes {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", s, strings.Repeat("a", s))
			n += s
		}
		return b.String() + "0\r\n\r\n", fmt.Sprint(n)
	}
	small, smallLen := frame(100, 8192, 100)
	cases := []struct {
		name, target, body string
		headers            map[string]string
		status             int
		code, msg, elem    string
	}{
		{"chunk too small", "/bkt/k", small, map[string]string{"X-Amz-Decoded-Content-Length": smallLen}, 400, "InvalidChunkSizeError",
			"Only the last chunk is allowed to have a size less than 8192 bytes", "</Message><Chunk>1</Chunk><BadChunkSize>100</BadChunkSize><Resource>"},
		{"not framed", "/bkt/k", "A\ndummy data\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "10"}, 400, "IncompleteBody",
			"The request body terminated unexpectedly", ""},
		{"decoded length differs", "/bkt/k", "b\r\nabcdefghijk\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "5"}, 400, "IncompleteBody",
			"You did not provide the number of bytes specified by the Content-Length HTTP header", ""},
		{"undeclared trailer", "/bkt/k", "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "5"},
			400, "MalformedTrailerError", "The request contained trailing data that was not well-formed or did not conform to our published schema.", ""},
		{"decoded length not a number", "/bkt/k", "5\r\nhello\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "12x"}, 411, "MissingContentLength",
			"You must provide the Content-Length HTTP header.", ""},
		{"bucket configuration", "/bkt?cors", "5\r\nabcde\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "5"}, 400, "InvalidRequest",
			"The value of x-amz-content-sha256 header is invalid.", ""},
		{"object tags", "/bkt/k?tagging", "5\r\nabcde\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "5"}, 400, "InvalidRequest",
			"The value of x-amz-content-sha256 header is invalid.", ""},
		{"bucket not implemented here", "/bkt?policy", "5\r\nabcde\r\n0\r\n\r\n", map[string]string{"X-Amz-Decoded-Content-Length": "5"}, 400, "InvalidRequest",
			"The value of x-amz-content-sha256 header is invalid.", ""},
	}
	before := be.mutations()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, unsignedStreamingPut(t, c.target, c.body, c.headers))
			checkAuthError(t, rec, c.status, c.code, c.msg, c.elem)
		})
	}
	if be.mutations() != before {
		t.Error("a refused request changed the backend")
	}
	// The operations that store a body take it.
	body, n := frame(8192, 100)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, unsignedStreamingPut(t, "/bkt/k", body, map[string]string{"X-Amz-Decoded-Content-Length": n}))
	if rec.Code != http.StatusOK {
		t.Fatalf("PutObject: %d %s", rec.Code, rec.Body.String())
	}
}
