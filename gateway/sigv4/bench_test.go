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

// BenchmarkVerifyV2 measures a V2 header request that verifies on the
// first string to sign, and one whose signature is wrong, which is tried
// against every variant clients build before it is refused.
func BenchmarkVerifyV2(b *testing.B) {
	for _, good := range []bool{true, false} {
		name := map[bool]string{true: "match", false: "mismatch"}[good]
		b.Run(name, func(b *testing.B) {
			r := newRequest("PUT", "http://s3.example.com/bucket/some/key?uploadId=abc&partNumber=3", nil)
			r.Header.Set("Date", testNow.Format("Mon, 02 Jan 2006 15:04:05 +0000"))
			r.Header.Set("X-Amz-Meta-A", "b")
			sig := SignV2(testSecret, StringToSignV2(r, r.Header.Get("Date"), ""))
			if !good {
				sig = SignV2("wrong", "x")
			}
			r.Header.Set("Authorization", "AWS "+testAK+":"+sig)
			v := newVerifier(testNow)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(r); (err == nil) != good {
					b.Fatal(err)
				}
			}
		})
	}
}
