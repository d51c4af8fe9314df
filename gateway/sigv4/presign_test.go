package sigv4

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPresignAWSExample checks the presigned URL published in the S3 docs
// ("Authenticating Requests: Using Query Parameters").
func TestPresignAWSExample(t *testing.T) {
	const u = "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
		"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
		"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now  time.Time
		want error
	}{
		{at, nil},
		{at.Add(24 * time.Hour), nil},
		{at.Add(24*time.Hour + time.Second), ErrExpired},
		{at.Add(-15 * time.Minute), nil},
		{at.Add(-16 * time.Minute), ErrAccessDenied}, // "Request is not valid yet"
	} {
		_, err := newVerifier(c.now).Verify(newRequest("GET", u, nil))
		wantErr(t, err, c.want)
	}
	// Presign reproduces the published URL.
	got, err := Presign("GET", "http://examplebucket.s3.amazonaws.com/test.txt", testAK, testSecret, testRegion, at, 24*time.Hour)
	if err != nil || got != u {
		t.Fatalf("Presign = %s, %v", got, err)
	}
}

// TestVerifyPresignedSDK presigns with aws-sdk-go-v2 and verifies.
func TestVerifyPresignedSDK(t *testing.T) {
	at := testNow.Add(-time.Hour)
	cases := []struct {
		name    string
		method  string
		target  string
		headers [][2]string
		body    []byte
	}{
		{"get", "GET", "http://s3.example.com/bucket/key", nil, nil},
		{"get with query", "GET", "http://s3.example.com/bucket/key?partNumber=1&response-content-type=text%2Fplain", nil, nil},
		{"escaped key", "GET", "http://s3.example.com/bucket/a%20b%2Bc%24", nil, nil},
		{"put with signed metadata", "PUT", "http://s3.example.com/bucket/key", [][2]string{{"X-Amz-Meta-Owner", "me"}, {"Content-Type", "text/plain"}}, []byte("payload")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest(c.method, c.target, c.body)
			for _, h := range c.headers {
				r.Header.Set(h[0], h[1])
			}
			pr := sdkPresign(t, r, 2*time.Hour, at)
			res, err := newVerifier(testNow).Verify(pr)
			if err != nil {
				t.Fatalf("Verify %s: %v", pr.URL, err)
			}
			if got, err := readBody(res); err != nil || !bytes.Equal(got, c.body) {
				t.Fatalf("body %q, %v", got, err)
			}
		})
	}
}

func TestVerifyPresignedRejects(t *testing.T) {
	at := testNow.Add(-time.Hour)
	signed := func(t *testing.T, expires time.Duration, when time.Time) *http.Request {
		r := newRequest("GET", "http://s3.example.com/bucket/key?versionId=3", nil)
		return sdkPresign(t, r, expires, when)
	}
	ok := func(t *testing.T) *http.Request { return signed(t, 2*time.Hour, at) }
	setQuery := func(r *http.Request, from, to string) *http.Request {
		r.URL.RawQuery = strings.Replace(r.URL.RawQuery, from, to, 1)
		return r
	}
	cases := []struct {
		name  string
		build func(t *testing.T) *http.Request
		want  error
	}{
		{"control", ok, nil},
		{"expired", func(t *testing.T) *http.Request { return signed(t, 59*time.Minute, at) }, ErrExpired},
		{"far future", func(t *testing.T) *http.Request { return signed(t, time.Hour, testNow.Add(20*time.Minute)) }, ErrAccessDenied},
		{"expires too long", func(t *testing.T) *http.Request { return signed(t, 7*24*time.Hour+time.Second, at) }, ErrMalformedQuery},
		{"expires zero", func(t *testing.T) *http.Request {
			return setQuery(ok(t), "X-Amz-Expires=7200", "X-Amz-Expires=0")
		}, ErrExpired},
		{"changed query", func(t *testing.T) *http.Request {
			return setQuery(ok(t), "versionId=3", "versionId=4")
		}, ErrSignatureDoesNotMatch},
		{"added query", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery += "&acl"
			return r
		}, ErrSignatureDoesNotMatch},
		{"changed path", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.Path = "/bucket/other"
			return r
		}, ErrSignatureDoesNotMatch},
		{"changed host", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Host = "evil.example.com"
			return r
		}, ErrSignatureDoesNotMatch},
		{"missing signature", func(t *testing.T) *http.Request {
			r := ok(t)
			i := strings.Index(r.URL.RawQuery, "&X-Amz-Signature=")
			r.URL.RawQuery = r.URL.RawQuery[:i]
			return r
		}, ErrMalformedQuery},
		{"duplicate signature", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery += "&X-Amz-Signature=" + strings.Repeat("0", 64)
			return r
		}, ErrMalformedQuery},
		{"other algorithm", func(t *testing.T) *http.Request {
			return setQuery(ok(t), "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=HMAC")
		}, ErrMalformedQuery},
		{"sigv4a", func(t *testing.T) *http.Request {
			return setQuery(ok(t), "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256")
		}, ErrMalformedQuery},
		{"session token", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery += "&X-Amz-Security-Token=token"
			return r
		}, ErrInvalidToken},
		{"bad payload hash", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery += "&X-Amz-Content-Sha256=abc"
			return r
		}, ErrInvalidAuthorization},
		{"unknown key", func(t *testing.T) *http.Request {
			return setQuery(ok(t), testAK, "AKIDUNKNOWN")
		}, ErrInvalidAccessKeyID},
		{"wrong region", func(t *testing.T) *http.Request {
			return setQuery(ok(t), "%2Fus-east-1%2F", "%2Feu-west-1%2F")
		}, ErrMalformedQuery},
		{"unsigned x-amz header", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("X-Amz-Acl", "public-read")
			return r
		}, ErrUnsignedHeaders},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newVerifier(testNow).Verify(c.build(t))
			wantErr(t, err, c.want)
		})
	}
}

// TestPresignedPayloadHash covers X-Amz-Content-Sha256 in the query: it
// replaces UNSIGNED-PAYLOAD in the canonical request and the body must
// then hash to it.
func TestPresignedPayloadHash(t *testing.T) {
	body := []byte("presigned body")
	for _, tamper := range []bool{false, true} {
		r := newRequest("PUT", "http://s3.example.com/b/k", body)
		q := r.URL.Query()
		q.Set("X-Amz-Content-Sha256", hexSHA256(body))
		r.URL.RawQuery = q.Encode()
		pr := sdkPresignHash(t, r, hexSHA256(body))
		if tamper {
			pr.Body = newRequest("PUT", "/", []byte("presigned bodY")).Body
		}
		res, err := newVerifier(testNow).Verify(pr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(res)
		if tamper {
			wantErr(t, err, ErrContentSHA256Mismatch)
		} else {
			wantErr(t, err, nil)
		}
	}
}
