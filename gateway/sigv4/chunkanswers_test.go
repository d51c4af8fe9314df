package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

const (
	msgTerminated = "The request body terminated unexpectedly"
	msgLength     = "You did not provide the number of bytes specified by the Content-Length HTTP header"
)

// sizedChunks frames chunks of the given sizes, unsigned, then the final
// chunk and an empty trailer section.
func sizedChunks(sizes ...int) ([]byte, int) {
	var b bytes.Buffer
	total := 0
	for _, n := range sizes {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, strings.Repeat("a", n))
		total += n
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes(), total
}

// TestChunkSizeRule: every chunk but the last data chunk must hold at
// least 8 KiB; S3 names the first one too small and its size.
func TestChunkSizeRule(t *testing.T) {
	cases := []struct {
		sizes     []int
		chunk     int // 0: accepted
		badSize   int64
		stopAfter int // bytes decoded before the refusal
	}{
		{[]int{8192, 8192, 100}, 0, 0, 0},
		{[]int{100}, 0, 0, 0},
		{[]int{10000, 9500, 20}, 0, 0, 0},
		{[]int{8200, 8201, 10000, 10}, 0, 0, 0},
		{[]int{100, 8192, 100}, 1, 100, 100},
		{[]int{8192, 10, 100}, 2, 10, 8202},
		{[]int{10, 10, 10}, 1, 10, 10},
		{[]int{10000, 10, 8192, 8192}, 2, 10, 10010},
		{[]int{8192, 8191, 8192}, 2, 8191, 16383},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.sizes), func(t *testing.T) {
			body, n := sizedChunks(c.sizes...)
			res, err := newVerifier(testNow).Verify(unsignedTrailerRequest(t, body, n, ""))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			if c.chunk == 0 {
				if err != nil || len(got) != n {
					t.Fatalf("decoded %d of %d bytes: %v", len(got), n, err)
				}
				return
			}
			e := asError(t, err, ErrChunkSize)
			if e.Chunk != c.chunk || e.BadChunkSize != c.badSize || len(got) != c.stopAfter {
				t.Fatalf("chunk %d of %d bytes after %d bytes, want chunk %d of %d after %d",
					e.Chunk, e.BadChunkSize, len(got), c.chunk, c.badSize, c.stopAfter)
			}
		})
	}
}

// TestChunkedAnswers: which S3 answer an aws-chunked body gets when it
// is not framed, when its length differs from the declared one, and when
// its trailers are not the declared ones.
func TestChunkedAnswers(t *testing.T) {
	crcHello := "x-amz-checksum-crc32:" + crc32Base64([]byte("hello"))
	cases := []struct {
		name, body string
		decoded    int
		trailer    string // x-amz-trailer
		want       error
		msg        string
	}{
		{"chunk line ends in LF", "A\ndummy data\r\n0\r\n\r\n", 10, "", ErrChunk, msgTerminated},
		{"no CRLF after data", "A\r\ndummy data0\r\n\r\n", 10, "", ErrChunk, msgTerminated},
		{"chunk size not hex", "invalid_chunk_size\r\ndummy data\r\n0\r\n\r\n", 10, "", ErrChunk, msgTerminated},
		{"body ends after the final chunk", "A\r\ndummy data\r\n0\r\n", 10, "", ErrChunk, msgTerminated},
		{"body ends after the trailer", "5\r\nhello\r\n0\r\n" + crcHello + "\r\n", 5, "x-amz-checksum-crc32", ErrChunk, msgTerminated},
		{"bare CR in a trailer", "5\r\nhello\r\n0\r\n" + crcHello + "\rxyz\r\n\r\n", 5, "x-amz-checksum-crc32", ErrChunk, msgTerminated},
		// A chunk past the declared length is read to its end first:
		// one not framed is reported as such.
		{"longer chunk not framed", "B\r\ndummy data\r\n0\r\n\r\n", 10, "", ErrChunk, msgTerminated},
		{"longer chunk", "b\r\nabcdefghijk\r\n0\r\n\r\n", 5, "", ErrChunk, msgLength},
		{"shorter payload", "b\r\nabcdefghijk\r\n0\r\n\r\n", 200, "", ErrChunk, msgLength},
		{"length before the trailer", "a\r\ndummy data\r\n0\r\nx-amz-checksum-sha256:abc\r\n\r\n", 7, "x-amz-checksum-crc32", ErrChunk, msgLength},
		{"declared trailer missing", "5\r\nhello\r\n0\r\n\r\n", 5, "x-amz-checksum-crc32", ErrMalformedTrailer, ""},
		{"empty trailer name", "5\r\nhello\r\n0\r\n:NhCmhg==\r\n\r\n", 5, "x-amz-checksum-crc32", ErrMalformedTrailer, ""},
		{"undeclared trailer", "5\r\nhello\r\n0\r\n" + crcHello + "\r\n\r\n", 5, "", ErrMalformedTrailer, ""},
		{"unknown trailer", "5\r\nhello\r\n0\r\ninvalid_trailer:NhCmhg==\r\n\r\n", 5, "x-amz-checksum-crc32", ErrMalformedTrailer, ""},
		{"declared trailer", "5\r\nhello\r\n0\r\n" + crcHello + "\r\n\r\n", 5, "x-amz-checksum-crc32", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(testNow).Verify(unsignedTrailerRequest(t, []byte(c.body), c.decoded, c.trailer))
			if err != nil {
				t.Fatal(err)
			}
			_, err = readBody(res)
			wantErr(t, err, c.want)
			if c.msg != "" {
				wantMessage(t, err, c.msg)
			}
		})
	}
}

// signedTrailerBody is an SDK-signed STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
// PUT of data with trailer (its lines, CRLF-joined) and a trailer
// signature over them; edit may change the encoded body before it is
// attached.
func signedTrailerBody(t *testing.T, data []byte, declared, trailer string, edit func(string) string) *http.Request {
	t.Helper()
	r := newRequest(http.MethodPut, "http://s3.example.com/bucket/obj", nil)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
	if declared != "" {
		r.Header.Set("X-Amz-Trailer", declared)
	}
	sdkSign(t, r, streamingSignedTrailer, testNow, testRegion, sdkCreds)
	chunks := signedChunks(t, data, 65536, seedOf(t, r), testNow)
	i := bytes.LastIndex(chunks, []byte("chunk-signature="))
	prev := string(chunks[i+16 : i+16+64])
	sum := sha256.Sum256([]byte(trailer + "\n"))
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + testNow.Format(iso8601Format) + "\n20240301/us-east-1/s3/aws4_request\n" + prev + "\n" + hex.EncodeToString(sum[:])
	sig := hex.EncodeToString(hmacSHA256(signingKey(testSecret, "20240301", testRegion), sts))
	body := string(chunks[:len(chunks)-2]) + trailer + "\r\nx-amz-trailer-signature:" + sig + "\r\n\r\n"
	if edit != nil {
		body = edit(body)
	}
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

// TestSignedTrailerAnswers: a signed trailer section S3 cannot frame is
// IncompleteBody, one whose trailers are not the declared one is
// MalformedTrailerError; a wrong signature is SignatureDoesNotMatch.
func TestSignedTrailerAnswers(t *testing.T) {
	data := []byte("abcdefg")
	crc := "x-amz-checksum-crc32:" + crc32Base64(data)
	edit := func(from, to string) func(string) string {
		return func(b string) string {
			if !strings.Contains(b, from) {
				t.Fatalf("%q not in body", from)
			}
			return strings.Replace(b, from, to, 1)
		}
	}
	cases := []struct {
		name, declared, trailer string
		edit                    func(string) string
		want                    error
	}{
		{"declared and sent", "x-amz-checksum-crc32", crc, nil, nil},
		{"unknown trailer", "x-amz-checksum-crc32", "x-amz-invalid:invalid", nil, ErrMalformedTrailer},
		{"empty trailer line", "x-amz-checksum-crc32", "", nil, ErrMalformedTrailer},
		{"another checksum", "x-amz-checksum-sha1", crc, nil, ErrMalformedTrailer},
		{"no x-amz-trailer", "", crc, nil, ErrMalformedTrailer},
		{"signature label mangled", "x-amz-checksum-crc32", crc, edit("x-amz-trailer-signature", "x-amz-trailer-abcdture"), ErrChunk},
		{"signature cut short", "x-amz-checksum-crc32", crc, edit("x-amz-trailer-signature:", "x-amz-trailer-signature:0"), ErrChunk},
		{"final CRLF replaced", "x-amz-checksum-crc32", crc, func(b string) string { return b[:len(b)-2] + "pp" }, ErrChunk},
		{"trailer merged into the signature line", "x-amz-checksum-crc32", crc, edit(crc+"\r\n", crc+"\rbcd"), ErrChunk},
		{"signature of other trailers", "x-amz-checksum-crc32", crc, edit(crc, "x-amz-checksum-crc32:"+crc32Base64([]byte("x"))), ErrSignatureDoesNotMatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(testNow).Verify(signedTrailerBody(t, data, c.declared, c.trailer, c.edit))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if c.want == nil && (!bytes.Equal(got, data) || res.Checksums["crc32"] != crc32Base64(data)) {
				t.Fatalf("decoded %q, checksums %v", got, res.Checksums)
			}
			if errors.Is(c.want, ErrChunk) {
				wantMessage(t, err, msgTerminated)
			}
		})
	}
}
