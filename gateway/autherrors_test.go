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
