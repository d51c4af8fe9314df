package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"tessera/checksum"
)

// fuzzChunkConfig picks one of the decoder's configurations from a byte.
func fuzzChunkConfig(mode byte) chunkConfig {
	cfg := chunkConfig{want: -1, out: map[string]string{}}
	if mode&1 != 0 {
		cfg.signer = &chunkSigner{
			key:     signingKey(testSecret, "20130524", testRegion),
			amzDate: "20130524T000000Z",
			scope:   "20130524/us-east-1/s3/aws4_request",
			prev:    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
		}
	}
	cfg.trailer = mode&2 != 0
	if cfg.trailer && mode&4 != 0 {
		cfg.ck = newChecksum(checksum.CRC32)
		cfg.ckInTrailer = true
	}
	if mode&8 != 0 {
		cfg.want = 66560
	}
	return cfg
}

// FuzzChunkedReader feeds arbitrary bodies to the aws-chunked decoder: it
// must not panic, must end (every successful Read consumes input), and
// must never yield more bytes than it was given.
func FuzzChunkedReader(f *testing.F) {
	// Small validly signed seeds: the published 66 KiB examples make each
	// fuzzing run too slow to explore much.
	const docSeed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	// One data chunk: a chunk below 8 KiB may only be the last.
	signed := signedChunks(f, []byte("0123456789abcdefghij"), 20, docSeed, docTime)
	withTrailer := append(signed[:len(signed)-2:len(signed)-2], fuzzSignedTrailer(signed)...)
	for _, seed := range []struct {
		mode byte
		body []byte
	}{{1, signed}, {1 | 2 | 4 | 0x30, withTrailer}} {
		c := newChunkedReader(io.NopCloser(bytes.NewReader(seed.body)), fuzzChunkConfig(seed.mode))
		if got, err := io.ReadAll(c); err != nil || string(got) != "0123456789abcdefghij" {
			f.Fatalf("seed does not decode: %q, %v", got, err)
		}
		f.Add(seed.mode, seed.body)
	}
	f.Add(byte(2|4), unsignedChunks([]byte("abc"), 2, "x-amz-checksum-crc32:NSRBwg=="))
	f.Add(byte(2|4), []byte("3\r\nabc\r\n0\r\nx-amz-checksum-crc32:NSRBwg==\n\r\n\r\n"))
	f.Add(byte(0), []byte("0\r\n\r\n"))
	f.Add(byte(0), []byte("ffffffff\r\n"))
	f.Add(byte(0), []byte("1\r\na\r\n"))
	f.Add(byte(2), []byte("0\r\n:\r\n\r\n"))
	f.Fuzz(func(t *testing.T, mode byte, body []byte) {
		c := newChunkedReader(io.NopCloser(bytes.NewReader(body)), fuzzChunkConfig(mode))
		buf := make([]byte, []int{1, 3, 64, 1000}[mode>>4&3])
		total, reads := 0, 0
		for {
			reads++
			if reads > len(body)+2 {
				t.Fatalf("%d reads of a %d-byte body", reads, len(body))
			}
			n, err := c.Read(buf)
			total += n
			if n < 0 || n > len(buf) || total > len(body) {
				t.Fatalf("read %d (total %d) from a %d-byte body", n, total, len(body))
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrChunk) && !errors.Is(err, ErrSignatureDoesNotMatch) &&
					!errors.Is(err, ErrChecksumMismatch) && !errors.Is(err, ErrInvalidChecksum) &&
					!errors.Is(err, ErrMalformedTrailer) && !errors.Is(err, ErrChunkSize) {
					t.Fatalf("unexpected error class: %v", err)
				}
				if n2, err2 := c.Read(buf); n2 != 0 || err2 != err {
					t.Fatalf("error not sticky: %d, %v", n2, err2)
				}
				return
			}
		}
	})
}

// FuzzParseAuthorization checks that whatever parses re-serialises to an
// equal value and that parsed values respect the invariants Verify relies on.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=" + strings.Repeat("a", 64),
		"AWS4-HMAC-SHA256 Signature=" + strings.Repeat("0", 64) + ",SignedHeaders=host;x-amz-date,Credential=a/b/20240101/r/s3/aws4_request",
		"AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request",
		"AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=",
		"AWS4-HMAC-SHA256 Credential==, SignedHeaders=;;, Signature=",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		a, err := parseAuthorization(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) &&
				!errors.Is(err, ErrInvalidAuthorization) && !errors.Is(err, ErrUnsignedHeaders) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if len(a.signature) != sha256.Size || a.cred.accessKey == "" || len(a.cred.date) != 8 {
			t.Fatalf("parsed %+v", a)
		}
		hasHost := false
		for _, n := range a.signedHeaders {
			hasHost = hasHost || n == "host"
			if n != strings.ToLower(n) || n == "" {
				t.Fatalf("signed header %q", n)
			}
		}
		if !hasHost {
			t.Fatal("host not signed")
		}
		b, err := parseAuthorization(a.String())
		if err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip of %q: %+v, %v", a.String(), b, err)
		}
	})
}

// fuzzSignedTrailer is a valid crc32 trailer with its signature for the
// signed seed body, chained from that body's final chunk signature.
func fuzzSignedTrailer(body []byte) []byte {
	i := bytes.LastIndex(body, []byte("chunk-signature="))
	prev := string(body[i+16 : i+16+64])
	s := fuzzChunkConfig(1).signer
	s.prev = prev
	line := "x-amz-checksum-crc32:" + crc32Base64([]byte("0123456789abcdefghij"))
	sum := sha256.Sum256([]byte(line + "\n"))
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + s.amzDate + "\n" + s.scope + "\n" + s.prev + "\n" + hex.EncodeToString(sum[:])
	return []byte(line + "\r\nx-amz-trailer-signature:" + hex.EncodeToString(hmacSHA256(s.key, sts)) + "\r\n\r\n")
}

func crc32Base64(b []byte) string {
	c := newChecksum(checksum.CRC32)
	c.h.Write(b)
	return base64.StdEncoding.EncodeToString(c.h.Sum(nil))
}

// FuzzRequestChecksum: the checksum headers and trailer declaration of
// any request either name exactly one known algorithm or fail with a
// ChecksumError; nothing panics.
func FuzzRequestChecksum(f *testing.F) {
	f.Add("X-Amz-Checksum-Crc32", "NSRBwg==", "", "")
	f.Add("X-Amz-Checksum-Sha1", "", "X-Amz-Checksum-Crc32c", "")
	f.Add("X-Amz-Checksum-Xxhash128", "BrBatnM6YYV4r1+UiS85UA==", "", "XXHASH128")
	f.Add("X-Amz-Checksum-Foo", "x", "", "")
	f.Add("", "", "x-amz-checksum-sha256,x-amz-checksum-crc32", "SHA256")
	f.Fuzz(func(t *testing.T, name, value, trailer, sdk string) {
		r := newRequest("PUT", "http://s3.example.com/b/k", nil)
		if name != "" && validHeaderName(name) {
			r.Header[http.CanonicalHeaderKey(name)] = []string{value}
		}
		if trailer != "" {
			r.Header.Set("X-Amz-Trailer", trailer)
		}
		if sdk != "" {
			r.Header.Set("X-Amz-Sdk-Checksum-Algorithm", sdk)
		}
		c, _, err := requestChecksum(r)
		if err != nil {
			var ce *ChecksumError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no ChecksumError", err)
			}
			return
		}
		if c != nil && !c.alg.Valid() {
			t.Fatalf("accepted algorithm %q", c.alg)
		}
	})
}
