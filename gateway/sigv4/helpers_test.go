package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The AWS documentation's example credentials.
const (
	testAK     = "AKIAIOSFODNN7EXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testRegion = "us-east-1"
)

var (
	testNow  = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	sdkCreds = aws.Credentials{AccessKeyID: testAK, SecretAccessKey: testSecret}
)

func newVerifier(now time.Time) *Verifier {
	return &Verifier{
		Region: testRegion,
		Lookup: func(ak string) (string, bool) {
			if ak == testAK {
				return testSecret, true
			}
			return "", false
		},
		Now: func() time.Time { return now },
	}
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newRequest builds a request as a server receives it.
func newRequest(method, target string, body []byte) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	return httptest.NewRequest(method, target, rd)
}

// sdkSign signs r with aws-sdk-go-v2's signer configured as its S3 client
// configures it: the path is signed as escaped, never escaped twice.
func sdkSign(t testing.TB, r *http.Request, payloadHash string, at time.Time, region string, creds aws.Credentials) {
	t.Helper()
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(context.Background(), creds, r, payloadHash, "s3", region, at); err != nil {
		t.Fatal(err)
	}
}

// sdkPresign presigns r with aws-sdk-go-v2 and returns the request a
// client following the URL would send.
func sdkPresign(t testing.TB, r *http.Request, expires time.Duration, at time.Time) *http.Request {
	t.Helper()
	q := r.URL.Query()
	q.Set("X-Amz-Expires", fmt.Sprint(int(expires/time.Second)))
	r.URL.RawQuery = q.Encode()
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	u, hdr, err := s.PresignHTTP(context.Background(), sdkCreds, r, unsignedPayload, "s3", testRegion, at)
	if err != nil {
		t.Fatal(err)
	}
	out := httptest.NewRequest(r.Method, u, r.Body)
	out.ContentLength = r.ContentLength
	for k, vs := range hdr {
		if k != "Host" {
			out.Header[k] = vs
		}
	}
	return out
}

// signedChunks frames data as a signed aws-chunked body. The signatures
// come from the SDK's event-stream signer: with no event headers its
// string to sign is exactly S3's chunk string to sign, which makes it an
// independent implementation of the chunk chain.
func signedChunks(t testing.TB, data []byte, size int, seedHex string, at time.Time) []byte {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	ss := v4.NewStreamSigner(sdkCreds, "s3", testRegion, seed)
	var b bytes.Buffer
	for {
		n := min(size, len(data))
		sig, err := ss.GetSignature(context.Background(), nil, data[:n], at)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x;chunk-signature=%x\r\n", n, sig)
		b.Write(data[:n])
		b.WriteString("\r\n")
		if n == 0 {
			return b.Bytes()
		}
		data = data[n:]
	}
}

// signedChunksLen is the encoded length of signedChunks' output.
func signedChunksLen(dataLen, size int) int {
	n := 0
	for {
		c := min(size, dataLen)
		n += len(fmt.Sprintf("%x", c)) + len(";chunk-signature=") + 64 + 2 + c + 2
		if c == 0 {
			return n
		}
		dataLen -= c
	}
}

// unsignedChunks frames data as STREAMING-UNSIGNED-PAYLOAD-TRAILER does,
// with the SDK's CRLF trailer layout.
func unsignedChunks(data []byte, size int, trailer string) []byte {
	var b bytes.Buffer
	for len(data) > 0 {
		n := min(size, len(data))
		fmt.Fprintf(&b, "%x\r\n", n)
		b.Write(data[:n])
		b.WriteString("\r\n")
		data = data[n:]
	}
	b.WriteString("0\r\n")
	if trailer != "" {
		b.WriteString(trailer + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// signedStreamingRequest is an SDK-signed PUT whose aws-chunked body is
// signed by the SDK's chunk signer.
func signedStreamingRequest(t testing.TB, data []byte, size int) *http.Request {
	t.Helper()
	r := newRequest(http.MethodPut, "http://s3.example.com/bucket/obj", nil)
	r.ContentLength = int64(signedChunksLen(len(data), size))
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
	sdkSign(t, r, streamingSigned, testNow, testRegion, sdkCreds)
	body := signedChunks(t, data, size, seedOf(t, r), testNow)
	if len(body) != int(r.ContentLength) {
		t.Fatalf("encoded %d bytes, expected %d", len(body), r.ContentLength)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

// seedOf extracts the request signature from the Authorization header.
func seedOf(t testing.TB, r *http.Request) string {
	t.Helper()
	_, sig, ok := strings.Cut(r.Header.Get("Authorization"), "Signature=")
	if !ok {
		t.Fatal("no signature in Authorization")
	}
	return sig
}

// readBody reads res.Body to the end, as the gateway would.
func readBody(res *Result) ([]byte, error) {
	b, err := io.ReadAll(res.Body)
	if cerr := res.Body.Close(); err == nil {
		err = cerr
	}
	return b, err
}

func wantErr(t testing.TB, got, want error) {
	t.Helper()
	if want == nil && got != nil || want != nil && !errors.Is(got, want) {
		t.Fatalf("error %v, want %v", got, want)
	}
}

// sdkPresignHash presigns r with an explicit payload hash.
func sdkPresignHash(t testing.TB, r *http.Request, payloadHash string) *http.Request {
	t.Helper()
	q := r.URL.Query()
	q.Set("X-Amz-Expires", "60")
	r.URL.RawQuery = q.Encode()
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	u, _, err := s.PresignHTTP(context.Background(), sdkCreds, r, payloadHash, "s3", testRegion, testNow)
	if err != nil {
		t.Fatal(err)
	}
	out := httptest.NewRequest(r.Method, u, r.Body)
	out.ContentLength = r.ContentLength
	return out
}
