package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestAuthErrorDocuments renders the verifier's failures as S3 does:
// code, status, message and the extra elements clients read.
func TestAuthErrorDocuments(t *testing.T) {
	be, h := v2Gateway(t)
	creds := aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	signAt := func(t *testing.T, at time.Time, method, target, payload string, edit func(*http.Request)) *http.Request {
		r := httptest.NewRequest(method, target, nil)
		r.Header.Set("X-Amz-Content-Sha256", payload)
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		if err := s.SignHTTP(t.Context(), creds, r, payload, "s3", "us-east-1", at); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(r)
		}
		return r
	}
	sign := func(t *testing.T, method, target, region string, edit func(*http.Request)) *http.Request {
		r := httptest.NewRequest(method, target, nil)
		r.Header.Set("X-Amz-Content-Sha256", empty)
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		if err := s.SignHTTP(t.Context(), creds, r, empty, "s3", region, time.Now()); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(r)
		}
		return r
	}
	setAuth := func(from, to string) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), from, to, 1))
		}
	}
	wrongHash := strings.Repeat("ab", 32)
	presign := func(t *testing.T, target, expires string, at time.Time) *http.Request {
		r := httptest.NewRequest("GET", target+"?X-Amz-Expires="+expires, nil)
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		u, _, err := s.PresignHTTP(t.Context(), creds, r, "UNSIGNED-PAYLOAD", "s3", "us-east-1", at)
		if err != nil {
			t.Fatal(err)
		}
		return httptest.NewRequest("GET", u, nil)
	}
	cases := []struct {
		name                string
		r                   func(t *testing.T) *http.Request
		status              int
		code, message, elem string
	}{
		{"signed for another region", func(t *testing.T) *http.Request { return sign(t, "PUT", "http://example.com/newbucket", "US", nil) },
			400, "AuthorizationHeaderMalformed", "The authorization header is malformed; the region 'US' is wrong; expecting 'us-east-1'",
			"<Region>us-east-1</Region>"},
		{"content sha256 not signed", func(t *testing.T) *http.Request {
			return sign(t, "PUT", "http://example.com/newbucket", "us-east-1", func(r *http.Request) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), ";x-amz-content-sha256", "", 1))
			})
		}, 403, "AccessDenied", "There were headers present in the request which were not signed",
			"<HeadersNotSigned>x-amz-content-sha256</HeadersNotSigned>"},
		{"unsigned metadata", func(t *testing.T) *http.Request {
			return sign(t, "PUT", "http://example.com/newbucket", "us-east-1", func(r *http.Request) { r.Header.Set("X-Amz-Meta-X", "1") })
		}, 403, "AccessDenied", "", "<HeadersNotSigned>x-amz-meta-x</HeadersNotSigned>"},
		{"missing content sha256", func(t *testing.T) *http.Request {
			return sign(t, "PUT", "http://example.com/newbucket", "us-east-1", func(r *http.Request) { r.Header.Del("X-Amz-Content-Sha256") })
		}, 400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256", ""},
		{"presigned over a week", func(t *testing.T) *http.Request { return presign(t, "http://example.com/b/k", "604801", time.Now()) },
			400, "AuthorizationQueryParametersError",
			"X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds", ""},
		{"presigned expired", func(t *testing.T) *http.Request {
			return presign(t, "http://example.com/b/k", "60", time.Now().Add(-time.Hour))
		},
			403, "AccessDenied", "Request has expired", "<X-Amz-Expires>60</X-Amz-Expires>"},
		{"presigned for another region", func(t *testing.T) *http.Request {
			r := presign(t, "http://example.com/b/k", "60", time.Now())
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "%2Fus-east-1%2F", "%2Feu-west-1%2F", 1)
			return r
		}, 400, "AuthorizationQueryParametersError",
			"Error parsing the X-Amz-Credential parameter; the region 'eu-west-1' is wrong; expecting 'us-east-1'", "<Region>us-east-1</Region>"},
		{"no space in Authorization", func(t *testing.T) *http.Request {
			return sign(t, "GET", "http://example.com/b", "us-east-1", func(r *http.Request) { r.Header.Set("Authorization", "invalid_header") })
		}, 400, "InvalidArgument", "Authorization header is invalid -- one and only one ' ' (space) required.",
			"<ArgumentName>Authorization</ArgumentName><ArgumentValue>invalid_header</ArgumentValue>"},
		{"unknown access key", func(t *testing.T) *http.Request {
			return sign(t, "GET", "http://example.com/b", "us-east-1", setAuth("Credential="+testAccessKey+"/", "Credential=AKIDUNKNOWN/"))
		}, 403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
			"</Message><AWSAccessKeyId>AKIDUNKNOWN</AWSAccessKeyId><Resource>"},
		{"signature does not match", func(t *testing.T) *http.Request {
			return sign(t, "GET", "http://example.com/b", "us-east-1", func(r *http.Request) {
				a := r.Header.Get("Authorization")
				r.Header.Set("Authorization", a[:strings.LastIndex(a, "=")+1]+strings.Repeat("0", 64))
			})
		}, 403, "SignatureDoesNotMatch", "", "</Message><AWSAccessKeyId>" + testAccessKey + "</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256&#xA;"},
		{"signature not 64 hex digits", func(t *testing.T) *http.Request {
			return sign(t, "GET", "http://example.com/b", "us-east-1", setAuth("Signature=", "Signature=0"))
		}, 400, "AuthorizationHeaderMalformed", "", ""},
		{"request time too skewed", func(t *testing.T) *http.Request {
			return signAt(t, time.Now().Add(-time.Hour), "GET", "http://example.com/b", empty, nil)
		}, 403, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.",
			"<MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds>"},
		{"x-amz-content-sha256 not a hash", func(t *testing.T) *http.Request {
			return sign(t, "PUT", "http://example.com/b/k", "us-east-1", func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "invalid_sha256") })
		}, 400, "InvalidArgument", "",
			"<ArgumentName>x-amz-content-sha256</ArgumentName><ArgumentValue>invalid_sha256</ArgumentValue>"},
		{"payload hash mismatch", func(t *testing.T) *http.Request {
			return signAt(t, time.Now(), "PUT", "http://example.com/b/k?tagging", wrongHash, nil)
		}, 400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.",
			"<ClientComputedContentSHA256>" + wrongHash + "</ClientComputedContentSHA256><S3ComputedContentSHA256>" + empty + "</S3ComputedContentSHA256>"},
		{"session token with a permanent key", func(t *testing.T) *http.Request {
			return sign(t, "GET", "http://example.com/b", "us-east-1", func(r *http.Request) { r.Header.Set("X-Amz-Security-Token", "token") })
		}, 400, "InvalidToken", "The provided token is malformed or otherwise invalid.", ""},
	}
	before := be.mutations()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, c.r(t))
			checkAuthError(t, rec, c.status, c.code, c.message, c.elem)
		})
	}
	if be.mutations() != before {
		t.Error("a rejected request changed the backend")
	}
}
