package sigv4

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestErrorElements: the elements S3 puts beside Code and Message, set
// on the *Error each failure returns.
func TestErrorElements(t *testing.T) {
	sign := func(t *testing.T, at time.Time, creds aws.Credentials, payload string) *http.Request {
		r := newRequest("PUT", "http://s3.example.com/b/k?tagging", nil)
		sdkSign(t, r, payload, at, testRegion, creds)
		return r
	}
	t.Run("unknown access key", func(t *testing.T) {
		for _, r := range []*http.Request{
			sign(t, testNow, aws.Credentials{AccessKeyID: "AKIDUNKNOWN", SecretAccessKey: testSecret}, hexSHA256(nil)),
			sdkPresign(t, newRequest("GET", "http://s3.example.com/b/k", nil), time.Hour, testNow),
		} {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, testAK, "AKIDUNKNOWN", 1)
			_, err := newVerifier(testNow).Verify(r)
			if e := asError(t, err, ErrInvalidAccessKeyID); e.AccessKeyID != "AKIDUNKNOWN" {
				t.Errorf("AWSAccessKeyId %q", e.AccessKeyID)
			}
		}
	})
	t.Run("signature does not match", func(t *testing.T) {
		r := sign(t, testNow, aws.Credentials{AccessKeyID: testAK, SecretAccessKey: "wrong"}, hexSHA256(nil))
		_, err := newVerifier(testNow).Verify(r)
		e := asError(t, err, ErrSignatureDoesNotMatch)
		sig := r.Header.Get("Authorization")[strings.LastIndex(r.Header.Get("Authorization"), "=")+1:]
		if e.AccessKeyID != testAK || e.SignatureProvided != sig ||
			!strings.HasPrefix(e.StringToSign, "AWS4-HMAC-SHA256\n20240301T120000Z\n20240301/us-east-1/s3/aws4_request\n") ||
			!strings.HasPrefix(e.CanonicalRequest, "PUT\n/b/k\ntagging=\n") {
			t.Errorf("%+v", e)
		}
	})
	t.Run("request time too skewed", func(t *testing.T) {
		r := sign(t, testNow.Add(-16*time.Minute), sdkCreds, hexSHA256(nil))
		_, err := newVerifier(testNow).Verify(r)
		e := asError(t, err, ErrRequestTimeTooSkewed)
		if e.RequestTime != "20240301T114400Z" || !e.ServerTime.Equal(testNow) || e.MaxSkew != 15*time.Minute {
			t.Errorf("%+v", e)
		}
	})
	t.Run("x-amz-content-sha256 not a hash", func(t *testing.T) {
		r := sign(t, testNow, sdkCreds, hexSHA256(nil))
		// Changed after signing: S3 reads it before the signature.
		r.Header.Set("X-Amz-Content-Sha256", "invalid_sha256")
		_, err := newVerifier(testNow).Verify(r)
		e := asError(t, err, ErrInvalidAuthorization)
		const msg = "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, " +
			"STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, " +
			"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value."
		if e.Message != msg || e.ArgumentName != "x-amz-content-sha256" || e.ArgumentValue != "invalid_sha256" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("payload hash mismatch", func(t *testing.T) {
		wrong := strings.Repeat("ab", 32)
		res, err := newVerifier(testNow).Verify(sign(t, testNow, sdkCreds, wrong))
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(res)
		e := asError(t, err, ErrContentSHA256Mismatch)
		if e.ClientSHA256 != wrong || e.ComputedSHA256 != emptySHA256 {
			t.Errorf("%+v", e)
		}
	})
}

func asError(t *testing.T, err, sentinel error) *Error {
	t.Helper()
	var e *Error
	if !errors.Is(err, sentinel) || !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error wrapping %v", err, sentinel)
	}
	return e
}
