package sigv4

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var docTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

// docChunkedRequest builds the PUT of the S3 docs' chunked-upload examples
// ("Transferring Payload in Multiple Chunks" and "trailing headers"):
// 65 KiB of 'a' in a 64 KiB and a 1 KiB chunk, with the published seed,
// chunk and trailer signatures.
func docChunkedRequest(trailer bool, sigs [3]string, trailerLines string) *http.Request {
	var b bytes.Buffer
	for i, n := range []int{65536, 1024, 0} {
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", n, sigs[i])
		b.WriteString(strings.Repeat("a", n))
		if n > 0 || !trailer {
			b.WriteString("\r\n")
		}
	}
	b.WriteString(trailerLines)
	if trailer {
		b.WriteString("\r\n")
	}
	r := newRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", b.Bytes())
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	signed, seed := "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
		"4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	r.Header.Set("X-Amz-Content-Sha256", streamingSigned)
	if trailer {
		signed, seed = "content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer",
			"106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"
		r.Header.Set("X-Amz-Content-Sha256", streamingSignedTrailer)
		r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32c")
	}
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20130524/us-east-1/s3/aws4_request,SignedHeaders="+signed+",Signature="+seed)
	return r
}

var (
	docSigs        = [3]string{"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648", "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497", "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"}
	docTrailerSigs = [3]string{"b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2", "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7", "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"}
	docTrailer     = "x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n"
)

func TestChunkedAWSExamples(t *testing.T) {
	flip := func(s string) string { return s[:10] + string(otherHex(s[10])) + s[11:] }
	cases := []struct {
		name     string
		trailer  bool
		sigs     [3]string
		trailers string
		want     error
	}{
		{"chunked", false, docSigs, "", nil},
		{"chunked with trailer", true, docTrailerSigs, docTrailer, nil},
		{"first chunk signature", false, [3]string{flip(docSigs[0]), docSigs[1], docSigs[2]}, "", ErrSignatureDoesNotMatch},
		{"second chunk signature", false, [3]string{docSigs[0], flip(docSigs[1]), docSigs[2]}, "", ErrSignatureDoesNotMatch},
		{"final chunk signature", false, [3]string{docSigs[0], docSigs[1], flip(docSigs[2])}, "", ErrSignatureDoesNotMatch},
		{"chunks out of order", false, [3]string{docSigs[1], docSigs[0], docSigs[2]}, "", ErrSignatureDoesNotMatch},
		{"trailer signature", true, docTrailerSigs, strings.Replace(docTrailer, "d81f", "d81e", 1), ErrSignatureDoesNotMatch},
		{"trailer checksum", true, docTrailerSigs, strings.Replace(docTrailer, "sOO8/Q==", "sOO8/A==", 1), ErrSignatureDoesNotMatch},
		// No signature line where one is due: S3 cannot frame the trailer.
		{"trailer missing signature", true, docTrailerSigs, "x-amz-checksum-crc32c:sOO8/Q==\r\n", ErrChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := docChunkedRequest(c.trailer, c.sigs, c.trailers)
			if !c.trailer && r.ContentLength != 66824 {
				t.Fatalf("encoded length %d, the docs say 66824", r.ContentLength)
			}
			res, err := newVerifier(docTime).Verify(r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Size != 66560 {
				t.Errorf("size %d", res.Size)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if c.want != nil {
				return
			}
			if !bytes.Equal(got, bytes.Repeat([]byte("a"), 66560)) {
				t.Fatalf("decoded %d bytes", len(got))
			}
			if c.trailer && res.Checksums["crc32c"] != "sOO8/Q==" {
				t.Fatalf("checksums %v", res.Checksums)
			}
		})
	}
}

// TestChunkedSDKSigned decodes bodies whose chunk signatures come from the
// SDK's signer, read in different ways.
func TestChunkedSDKSigned(t *testing.T) {
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i % 251)
	}
	cases := []struct {
		name  string
		n     int
		chunk int
		wrap  func(io.Reader) io.Reader
	}{
		{"empty", 0, 65536, nil},
		{"one byte", 1, 65536, nil},
		{"exact chunk", 65536, 65536, nil},
		{"chunks and remainder", 200_000, 65536, nil},
		{"least chunks, byte reads", 20000, 8192, iotest.OneByteReader},
		{"half reads", 70_000, 8192, iotest.HalfReader},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := signedStreamingRequest(t, data[:c.n], c.chunk)
			res, err := newVerifier(testNow).Verify(r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Size != int64(c.n) {
				t.Errorf("size %d", res.Size)
			}
			var rd io.Reader = res.Body
			if c.wrap != nil {
				rd = c.wrap(rd)
			}
			got, err := io.ReadAll(rd)
			if err != nil || !bytes.Equal(got, data[:c.n]) {
				t.Fatalf("decoded %d bytes, %v", len(got), err)
			}
			// The error, or EOF, is sticky.
			if n, err := res.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("read after EOF: %d, %v", n, err)
			}
		})
	}
}

// TestChunkedTamper mutates an SDK-signed aws-chunked body.
func TestChunkedTamper(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 3000) // 30000 bytes
	const chunk = 10000
	base := func(t *testing.T) (*http.Request, []byte) {
		r := signedStreamingRequest(t, data, chunk)
		b, _ := io.ReadAll(r.Body)
		return r, b
	}
	hdr := len(fmt.Sprintf("%x;chunk-signature=", chunk)) + 64 + 2
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		want   error
	}{
		{"control", func(b []byte) []byte { return b }, nil},
		{"data byte", func(b []byte) []byte { b[hdr+5] ^= 1; return b }, ErrSignatureDoesNotMatch},
		{"last chunk data byte", func(b []byte) []byte { b[2*(hdr+chunk+2)+hdr+chunk-1] ^= 1; return b }, ErrSignatureDoesNotMatch},
		{"chunk signature", func(b []byte) []byte { b[hdr-3] = otherHex(b[hdr-3]); return b }, ErrSignatureDoesNotMatch},
		{"truncated in data", func(b []byte) []byte { return b[:hdr+100] }, ErrChunk},
		{"truncated in header", func(b []byte) []byte { return b[:hdr+chunk+2+10] }, ErrChunk},
		{"no final chunk", func(b []byte) []byte { return b[:3*(hdr+chunk+2)] }, ErrChunk},
		{"no final CRLF", func(b []byte) []byte { return b[:len(b)-2] }, ErrChunk},
		{"trailing garbage", func(b []byte) []byte { return append(b, 'x') }, ErrChunk},
		{"missing CRLF after data", func(b []byte) []byte {
			return append(b[:hdr+chunk:hdr+chunk], b[hdr+chunk+2:]...)
		}, ErrChunk},
		{"oversized chunk line", func(b []byte) []byte {
			return append([]byte("2710"+strings.Repeat(" ", 2000)+";chunk-signature="), b[4:]...)
		}, ErrChunk},
		{"huge chunk size", func(b []byte) []byte {
			return append([]byte("1000001"), b[4:]...)
		}, ErrChunk},
		{"signed chunk without signature", func(b []byte) []byte {
			return []byte("2710\r\n" + string(b[hdr:]))
		}, ErrChunk},
		{"negative chunk size", func(b []byte) []byte {
			return append([]byte("-271"), b[4:]...)
		}, ErrChunk},
		{"LF-only chunk line", func(b []byte) []byte {
			return append(b[:hdr-2:hdr-2], b[hdr-1:]...)
		}, ErrChunk},
		{"trailer in non-trailer mode", func(b []byte) []byte {
			return append(b[:len(b)-2:len(b)-2], []byte("x-amz-checksum-crc32:AAAAAA==\r\n\r\n")...)
		}, ErrChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, b := base(t)
			r.Body = io.NopCloser(bytes.NewReader(c.mutate(b)))
			res, err := newVerifier(testNow).Verify(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if len(got) > len(data) {
				t.Fatalf("decoded %d bytes from %d", len(got), len(data))
			}
		})
	}
}

// TestChunkedDecodedLength signs a wrong x-amz-decoded-content-length: the
// seed signature holds, the body does not.
func TestChunkedDecodedLength(t *testing.T) {
	data := bytes.Repeat([]byte("z"), 20000)
	for _, c := range []struct {
		declared string
		want     error
	}{
		{"20000", nil},
		{"19999", ErrChunk},
		{"20001", ErrChunk},
		{"", nil},
		{"+20000", ErrMissingLength},
		{"abc", ErrMissingLength},
	} {
		t.Run(c.declared, func(t *testing.T) {
			r := newRequest(http.MethodPut, "http://s3.example.com/bucket/obj", nil)
			r.ContentLength = int64(signedChunksLen(len(data), 8192))
			if c.declared != "" {
				r.Header.Set("X-Amz-Decoded-Content-Length", c.declared)
			}
			sdkSign(t, r, streamingSigned, testNow, testRegion, sdkCreds)
			r.Body = io.NopCloser(bytes.NewReader(signedChunks(t, data, 8192, seedOf(t, r), testNow)))
			res, err := newVerifier(testNow).Verify(r)
			if err != nil {
				wantErr(t, err, c.want)
				return
			}
			if c.declared == "" && res.Size != -1 {
				t.Errorf("size %d without a decoded length", res.Size)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if err == nil && !bytes.Equal(got, data) {
				t.Fatal("decoded data differs")
			}
		})
	}
}

// otherHex returns a hex digit different from c.
func otherHex(c byte) byte {
	if c == '0' {
		return '1'
	}
	return '0'
}

// TestChunkedHeaderChecksum sends the checksum as a header with signed
// chunks: it is checked over the decoded payload, not the encoding.
func TestChunkedHeaderChecksum(t *testing.T) {
	data := []byte(strings.Repeat("abc", 10000))
	good := crc32Base64(data)
	for _, c := range []struct {
		value string
		want  error
	}{{good, nil}, {crc32Base64([]byte("abc")), ErrChecksumMismatch}} {
		r := newRequest(http.MethodPut, "http://s3.example.com/bucket/obj", nil)
		r.ContentLength = int64(signedChunksLen(len(data), 8192))
		r.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
		r.Header.Set("X-Amz-Checksum-Crc32", c.value)
		sdkSign(t, r, streamingSigned, testNow, testRegion, sdkCreds)
		r.Body = io.NopCloser(bytes.NewReader(signedChunks(t, data, 8192, seedOf(t, r), testNow)))
		res, err := newVerifier(testNow).Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(res)
		wantErr(t, err, c.want)
		if c.want == nil && res.Checksums["crc32"] != good {
			t.Fatalf("checksums %v", res.Checksums)
		}
	}
}
