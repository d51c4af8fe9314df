package sigv4

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"tessera/checksum"
)

// Published check values: "abc" for the CRCs, SHAs, MD5 and xxHashes
// (RFC 3720, FIPS 180, RFC 1321 and xxHash's reference vectors), and
// CRC-64/NVME's catalogue check value over "123456789".
var checksumVectors = []struct {
	alg, input, b64 string
}{
	{"crc32", "abc", "NSRBwg=="},
	{"crc32c", "abc", "Nks/tw=="},
	{"sha1", "abc", "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="},
	{"sha256", "abc", "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="},
	{"md5", "abc", "kAFQmDzST7DWlj99KOF/cg=="},
	{"sha512", "abc", "3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="},
	{"xxhash64", "abc", "RLws9a13CZk="},
	{"xxhash3", "abc", "eK9flIkvOVA="},
	{"xxhash128", "abc", "BrBatnM6YYV4r1+UiS85UA=="},
	{"crc64nvme", "123456789", base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, 0xae8b14860a799888))},
}

// TestChecksumHeaders sends each algorithm as a header with a signed
// payload hash and with UNSIGNED-PAYLOAD.
func TestChecksumHeaders(t *testing.T) {
	for _, v := range checksumVectors {
		for _, payload := range []string{"", unsignedPayload} {
			for _, good := range []bool{true, false} {
				name := v.alg + map[bool]string{true: " good", false: " bad"}[good] + " " + payload
				t.Run(name, func(t *testing.T) {
					body := []byte(v.input)
					if !good {
						body = []byte(v.input + "!")
					}
					ph := payload
					if ph == "" {
						ph = hexSHA256(body)
					}
					r := newRequest("PUT", "http://s3.example.com/b/k", body)
					r.Header.Set("X-Amz-Checksum-"+v.alg, v.b64)
					r.Header.Set("X-Amz-Sdk-Checksum-Algorithm", v.alg)
					sdkSign(t, r, ph, testNow, testRegion, sdkCreds)
					res, err := newVerifier(testNow).Verify(r)
					if err != nil {
						t.Fatal(err)
					}
					_, err = readBody(res)
					if !good {
						wantErr(t, err, ErrChecksumMismatch)
						if len(res.Checksums) != 0 {
							t.Fatalf("checksums %v after a mismatch", res.Checksums)
						}
						return
					}
					wantErr(t, err, nil)
					if res.Checksums[v.alg] != v.b64 || len(res.Checksums) != 1 {
						t.Fatalf("checksums %v", res.Checksums)
					}
				})
			}
		}
	}
}

func TestChecksumHeaderErrors(t *testing.T) {
	crc := checksumVectors[0].b64
	cases := []struct {
		name    string
		headers [][2]string
		problem ChecksumProblem
	}{
		{"bad base64", [][2]string{{"X-Amz-Checksum-Crc32", "!!!!"}}, InvalidChecksumValue},
		{"empty", [][2]string{{"X-Amz-Checksum-Sha1", ""}}, InvalidChecksumValue},
		{"wrong length", [][2]string{{"X-Amz-Checksum-Crc32", "AAAAAAAA"}}, InvalidChecksumValue},
		{"unpadded", [][2]string{{"X-Amz-Checksum-Crc32", "NSRBwg"}}, InvalidChecksumValue},
		{"unknown algorithm", [][2]string{{"X-Amz-Checksum-Crc16", "kAFQ"}}, UnknownChecksumHeader},
		{"two checksums", [][2]string{{"X-Amz-Checksum-Crc32", crc}, {"X-Amz-Checksum-Crc32c", "Nks/tw=="}}, MultipleChecksums},
		{"repeated header", [][2]string{{"X-Amz-Checksum-Crc32", crc}, {"X-Amz-Checksum-Crc32", crc}}, MultipleChecksums},
		{"two, one malformed", [][2]string{{"X-Amz-Checksum-Sha1", "Kq5sNclPz7QV2+lfQIuc6R7oRu0="}, {"X-Amz-Checksum-Crc32c", "!!"}}, MultipleChecksums},
		{"two empty", [][2]string{{"X-Amz-Checksum-Sha1", ""}, {"X-Amz-Checksum-Crc32c", ""}}, MultipleChecksums},
		{"sdk algorithm mismatch", [][2]string{{"X-Amz-Checksum-Crc32", crc}, {"X-Amz-Sdk-Checksum-Algorithm", "SHA256"}}, SDKAlgorithmMismatch},
		{"sdk algorithm alone", [][2]string{{"X-Amz-Sdk-Checksum-Algorithm", "CRC32"}}, SDKAlgorithmWithout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest("PUT", "http://s3.example.com/b/k", []byte("abc"))
			for _, h := range c.headers {
				r.Header.Add(h[0], h[1])
			}
			sdkSign(t, r, unsignedPayload, testNow, testRegion, sdkCreds)
			_, err := newVerifier(testNow).Verify(r)
			wantErr(t, err, ErrInvalidChecksum)
			var ce *ChecksumError
			if !errors.As(err, &ce) || ce.Problem != c.problem {
				t.Fatalf("error %v, want problem %d", err, c.problem)
			}
		})
	}
	// A trailer needs an aws-chunked payload.
	r := newRequest("PUT", "http://s3.example.com/b/k", []byte("abc"))
	r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	sdkSign(t, r, unsignedPayload, testNow, testRegion, sdkCreds)
	_, err := newVerifier(testNow).Verify(r)
	wantErr(t, err, ErrInvalidChecksum)
	// Headers that configure checksums are not checksums.
	r = newRequest("GET", "http://s3.example.com/b/k", nil)
	r.Header.Set("X-Amz-Checksum-Mode", "ENABLED")
	sdkSign(t, r, hexSHA256(nil), testNow, testRegion, sdkCreds)
	if _, err := newVerifier(testNow).Verify(r); err != nil {
		t.Fatal(err)
	}
}

// unsignedTrailerRequest is an SDK-signed STREAMING-UNSIGNED-PAYLOAD-TRAILER PUT.
func unsignedTrailerRequest(t *testing.T, body []byte, decoded int, trailerHeader string) *http.Request {
	r := newRequest("PUT", "http://s3.example.com/b/k", body)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(decoded))
	if trailerHeader != "" {
		r.Header.Set("X-Amz-Trailer", trailerHeader)
	}
	sdkSign(t, r, streamingUnsignedTrailer, testNow, testRegion, sdkCreds)
	return r
}

// withoutEnd drops the CRLF that ends an unsignedChunks body, so a test
// can append its own ending.
func withoutEnd(b []byte) string { return string(b[:len(b)-2]) }

func TestUnsignedTrailer(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 30000) // 90000 bytes, two chunks
	crc := func(alg string) string {
		c := newChecksum(checksum.Algorithm(strings.ToUpper(alg)))
		c.h.Write(data)
		return base64.StdEncoding.EncodeToString(c.h.Sum(nil))
	}
	for _, v := range checksumVectors {
		t.Run("vector "+v.alg, func(t *testing.T) {
			body := unsignedChunks([]byte(v.input), 65536, "x-amz-checksum-"+v.alg+":"+v.b64)
			res, err := newVerifier(testNow).Verify(unsignedTrailerRequest(t, body, len(v.input), "x-amz-checksum-"+v.alg))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			if err != nil || string(got) != v.input || res.Checksums[v.alg] != v.b64 {
				t.Fatalf("%q %v %v", got, err, res.Checksums)
			}
		})
	}
	good := "x-amz-checksum-crc32c:" + crc("crc32c")
	cases := []struct {
		name    string
		body    []byte
		trailer string // x-amz-trailer
		want    error
	}{
		{"sdk layout", unsignedChunks(data, 65536, good), "x-amz-checksum-crc32c", nil},
		{"minio-go layout", []byte(withoutEnd(unsignedChunks(data, 65536, "")) + good + "\n\r\n\r\n"), "x-amz-checksum-crc32c", nil},
		{"spaces around value", unsignedChunks(data, 65536, "x-amz-checksum-crc32c: "+crc("crc32c")+" "), "x-amz-checksum-crc32c", nil},
		{"no trailer declared or sent", unsignedChunks(data, 65536, ""), "", nil},
		{"wrong checksum", unsignedChunks(data, 65536, "x-amz-checksum-crc32c:AAAAAA=="), "x-amz-checksum-crc32c", ErrChecksumMismatch},
		{"body byte changed", bytes.Replace(unsignedChunks(data, 65536, good), []byte("abcabc"), []byte("abcabd"), 1), "x-amz-checksum-crc32c", ErrChecksumMismatch},
		{"malformed trailer value", unsignedChunks(data, 65536, "x-amz-checksum-crc32c:%%%"), "x-amz-checksum-crc32c", ErrInvalidChecksum},
		{"declared trailer missing", unsignedChunks(data, 65536, ""), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"undeclared trailer", unsignedChunks(data, 65536, good), "", ErrMalformedTrailer},
		{"other trailer", unsignedChunks(data, 65536, "x-amz-checksum-crc32:"+crc("crc32")), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"trailer twice", unsignedChunks(data, 65536, good+"\r\n"+good), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"trailer without colon", unsignedChunks(data, 65536, "x-amz-checksum-crc32c"), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"signature in unsigned mode", unsignedChunks(data, 65536, good+"\r\nx-amz-trailer-signature:"+docSigs[0]), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"signed chunk line", []byte("3;chunk-signature=" + docSigs[0] + "\r\nabc\r\n0\r\n\r\n"), "", ErrChunk},
		{"oversized trailer line", unsignedChunks(data, 65536, "x-amz-checksum-crc32c:"+string(bytes.Repeat([]byte("A"), 2000))), "x-amz-checksum-crc32c", ErrChunk},
		{"too many trailer lines", unsignedChunks(data, 65536, string(bytes.Repeat([]byte("a:b\r\n"), 20))), "x-amz-checksum-crc32c", ErrMalformedTrailer},
		{"bare LF line", []byte(withoutEnd(unsignedChunks(data, 65536, "")) + "\n"), "", ErrChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(testNow).Verify(unsignedTrailerRequest(t, c.body, len(data), c.trailer))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if err == nil && !bytes.Equal(got, data) {
				t.Fatalf("decoded %d bytes", len(got))
			}
		})
	}
}

func TestTrailerDeclarationErrors(t *testing.T) {
	body := unsignedChunks([]byte("abc"), 10, "")
	for _, c := range []struct {
		name, mode, trailer string
	}{
		{"two trailers", streamingUnsignedTrailer, "x-amz-checksum-crc32,x-amz-checksum-sha1"},
		{"not a checksum", streamingUnsignedTrailer, "x-amz-meta-late"},
		{"unknown algorithm", streamingUnsignedTrailer, "x-amz-checksum-crc16"},
		{"trailer without trailer mode", streamingSigned, "x-amz-checksum-crc32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest("PUT", "http://s3.example.com/b/k", body)
			r.Header.Set("X-Amz-Trailer", c.trailer)
			sdkSign(t, r, c.mode, testNow, testRegion, sdkCreds)
			_, err := newVerifier(testNow).Verify(r)
			wantErr(t, err, ErrInvalidChecksum)
		})
	}
	// aws-chunked payloads cannot be presigned.
	r := newRequest("PUT", "http://s3.example.com/b/k", body)
	q := r.URL.Query()
	q.Set("X-Amz-Content-Sha256", streamingUnsignedTrailer)
	r.URL.RawQuery = q.Encode()
	_, err := newVerifier(testNow).Verify(sdkPresignHash(t, r, streamingUnsignedTrailer))
	wantErr(t, err, ErrMalformed)
}

// TestCompleteMultipartChecksumIsTheObjects: CompleteMultipartUpload's
// x-amz-checksum-* header is the assembled object's checksum (minio-go
// sends it with TrailingHeaders), not the checksum of the XML body.
func TestCompleteMultipartChecksumIsTheObjects(t *testing.T) {
	body := []byte("<CompleteMultipartUpload></CompleteMultipartUpload>")
	r := newRequest("POST", "http://s3.example.com/b/k?uploadId=abc", body)
	r.Header.Set("X-Amz-Checksum-Crc32c", "Nks/tw==")
	r.Header.Set("X-Amz-Checksum-Type", "FULL_OBJECT")
	sdkSign(t, r, hexSHA256(body), testNow, testRegion, sdkCreds)
	res, err := newVerifier(testNow).Verify(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBody(res)
	if err != nil || string(got) != string(body) || len(res.Checksums) != 0 {
		t.Fatalf("%q %v %v", got, err, res.Checksums)
	}
	// Any other POST's checksum is its body's.
	r = newRequest("POST", "http://s3.example.com/b?delete", body)
	r.Header.Set("X-Amz-Checksum-Crc32c", "Nks/tw==")
	sdkSign(t, r, hexSHA256(body), testNow, testRegion, sdkCreds)
	if res, err = newVerifier(testNow).Verify(r); err != nil {
		t.Fatal(err)
	}
	if _, err := readBody(res); !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("body checksum not checked: %v", err)
	}
}
