package sigv4

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkChunkedSigned(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 1<<20)
	r := signedStreamingRequest(b, data, 64<<10)
	body, _ := io.ReadAll(r.Body)
	v := newVerifier(testNow)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		res, err := v.Verify(r)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyHeader(b *testing.B) {
	r := newRequest("GET", "http://s3.example.com/bucket/some/key?list-type=2&prefix=a", nil)
	r.Header.Set("X-Amz-Meta-A", "b")
	sdkSign(b, r, hexSHA256(nil), testNow, testRegion, sdkCreds)
	v := newVerifier(testNow)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(r); err != nil {
			b.Fatal(err)
		}
	}
}
