package sigv4

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestVerifySDKSigned signs requests with aws-sdk-go-v2 and verifies them.
func TestVerifySDKSigned(t *testing.T) {
	cases := []struct {
		name    string
		method  string
		target  string
		headers [][2]string
		body    []byte
		payload string // "" means the body's SHA-256
	}{
		{"get", "GET", "http://s3.example.com/bucket/key", nil, nil, ""},
		{"list query", "GET", "http://s3.example.com/bucket?list-type=2&prefix=a%2Fb&delimiter=%2F", nil, nil, ""},
		{"subresource", "GET", "http://s3.example.com/bucket?acl", nil, nil, ""},
		{"repeated params", "GET", "http://s3.example.com/bucket?b=2&a=2&a=1&c=", nil, nil, ""},
		{"sort by encoded name", "GET", "http://s3.example.com/bucket?aA=1&a%5B=2&a-=3", nil, nil, ""},
		{"plus and tilde in query", "GET", "http://s3.example.com/bucket?prefix=a+b%2Bc~&x=%2A", nil, nil, ""},
		{"escaped key", "PUT", "http://s3.example.com/bucket/a%20key%2Bwith%24odd%2Fchars~", [][2]string{{"Content-Type", "text/plain"}}, []byte("data"), ""},
		{"unicode key", "PUT", "http://s3.example.com/bucket/%E6%97%A5%E6%9C%AC/%C3%A9", nil, []byte("x"), ""},
		{"dot segments kept", "GET", "http://s3.example.com/bucket/a/../b/./c", nil, nil, ""},
		{"double slash kept", "GET", "http://s3.example.com/bucket//key", nil, nil, ""},
		{"virtual host with port", "GET", "http://bucket.s3.example.com:9000/key", nil, nil, ""},
		{"spaces in header", "PUT", "http://s3.example.com/b/k", [][2]string{{"X-Amz-Meta-A", "  x   y  z "}}, []byte("hello"), ""},
		{"multi-value header", "PUT", "http://s3.example.com/b/k", [][2]string{{"X-Amz-Meta-M", "one"}, {"X-Amz-Meta-M", "two"}}, nil, ""},
		{"unsigned payload", "PUT", "http://s3.example.com/b/k", nil, []byte("some payload"), unsignedPayload},
		{"delete", "DELETE", "http://s3.example.com/b/k?versionId=null", nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest(c.method, c.target, c.body)
			for _, h := range c.headers {
				r.Header.Add(h[0], h[1])
			}
			payload := c.payload
			if payload == "" {
				payload = hexSHA256(c.body)
			}
			sdkSign(t, r, payload, testNow.Add(-time.Minute), testRegion, sdkCreds)
			res, err := newVerifier(testNow).Verify(r)
			if err != nil {
				t.Fatalf("Verify: %v\nAuthorization: %s", err, r.Header.Get("Authorization"))
			}
			if res.AccessKey != testAK {
				t.Errorf("access key %q", res.AccessKey)
			}
			if res.Size != int64(len(c.body)) {
				t.Errorf("size %d, want %d", res.Size, len(c.body))
			}
			got, err := readBody(res)
			if err != nil || !bytes.Equal(got, c.body) {
				t.Fatalf("body %q, %v", got, err)
			}
		})
	}
}

// TestVerifyAWSExamples checks the signatures published in the S3 docs
// ("Signature Calculations for the Authorization Header: Transferring
// Payload in a Single Chunk"), which no SDK code produced.
func TestVerifyAWSExamples(t *testing.T) {
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	empty := hexSHA256(nil)
	cases := []struct {
		name, method, target, signed, sig string
		headers                           [][2]string
		body                              []byte
	}{
		{"get object", "GET", "/test.txt", "host;range;x-amz-content-sha256;x-amz-date",
			"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
			[][2]string{{"Range", "bytes=0-9"}, {"X-Amz-Content-Sha256", empty}}, nil},
		{"put object", "PUT", "/test%24file.text", "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
			"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
			[][2]string{{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"X-Amz-Storage-Class", "REDUCED_REDUNDANCY"},
				{"X-Amz-Content-Sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"}},
			[]byte("Welcome to Amazon S3.")},
		{"get lifecycle", "GET", "/?lifecycle", "host;x-amz-content-sha256;x-amz-date",
			"fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
			[][2]string{{"X-Amz-Content-Sha256", empty}}, nil},
		{"list objects", "GET", "/?max-keys=2&prefix=J", "host;x-amz-content-sha256;x-amz-date",
			"34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
			[][2]string{{"X-Amz-Content-Sha256", empty}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest(c.method, "http://examplebucket.s3.amazonaws.com"+c.target, c.body)
			r.Header.Set("X-Amz-Date", "20130524T000000Z")
			for _, h := range c.headers {
				r.Header.Set(h[0], h[1])
			}
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20130524/us-east-1/s3/aws4_request,SignedHeaders="+c.signed+",Signature="+c.sig)
			res, err := newVerifier(at).Verify(r)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := readBody(res); err != nil || !bytes.Equal(got, c.body) {
				t.Fatalf("body %q, %v", got, err)
			}
		})
	}
}

// TestVerifyRejects covers tampering and every header-auth failure.
func TestVerifyRejects(t *testing.T) {
	body := []byte("the object body")
	// signedPut is an SDK-signed PUT with metadata.
	signedPut := func(t *testing.T, at time.Time, region string, creds aws.Credentials) *http.Request {
		r := newRequest("PUT", "http://s3.example.com/bucket/key?tagging", body)
		r.Header.Set("X-Amz-Meta-Color", "blue")
		sdkSign(t, r, hexSHA256(body), at, region, creds)
		return r
	}
	ok := func(t *testing.T) *http.Request { return signedPut(t, testNow, testRegion, sdkCreds) }
	cases := []struct {
		name    string
		build   func(t *testing.T) *http.Request
		verify  error // from Verify
		readErr error // from reading the body, when Verify succeeds
	}{
		{"control", ok, nil, nil},
		{"changed signed header", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("X-Amz-Meta-Color", "red")
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"changed path", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.Path = "/bucket/key2"
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"changed query", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery = "tagging&versionId=1"
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"changed method", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Method = "POST"
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"changed host", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Host = "other.example.com"
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"encoded slash is not a slash", func(t *testing.T) *http.Request {
			r := newRequest("GET", "http://s3.example.com/bucket/a%2Fb", nil)
			sdkSign(t, r, hexSHA256(nil), testNow, testRegion, sdkCreds)
			r.URL.RawPath = ""
			r.URL.Path = "/bucket/a/b"
			return r
		}, ErrSignatureDoesNotMatch, nil},
		{"changed body byte", func(t *testing.T) *http.Request {
			r := ok(t)
			b := bytes.Clone(body)
			b[3] ^= 1
			r.Body = newRequest("PUT", "/", b).Body
			return r
		}, nil, ErrContentSHA256Mismatch},
		{"truncated body", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Body = newRequest("PUT", "/", body[:5]).Body
			return r
		}, nil, ErrContentSHA256Mismatch},
		{"unsigned x-amz header added", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("X-Amz-Acl", "public-read")
			return r
		}, ErrUnsignedHeaders, nil},
		{"wrong secret", func(t *testing.T) *http.Request {
			return signedPut(t, testNow, testRegion, aws.Credentials{AccessKeyID: testAK, SecretAccessKey: "nope"})
		}, ErrSignatureDoesNotMatch, nil},
		{"unknown key", func(t *testing.T) *http.Request {
			return signedPut(t, testNow, testRegion, aws.Credentials{AccessKeyID: "AKIDUNKNOWN", SecretAccessKey: testSecret})
		}, ErrInvalidAccessKeyID, nil},
		{"wrong region", func(t *testing.T) *http.Request {
			return signedPut(t, testNow, "eu-west-1", sdkCreds)
		}, ErrMalformed, nil},
		{"skew past", func(t *testing.T) *http.Request {
			return signedPut(t, testNow.Add(-16*time.Minute), testRegion, sdkCreds)
		}, ErrRequestTimeTooSkewed, nil},
		{"skew future", func(t *testing.T) *http.Request {
			return signedPut(t, testNow.Add(16*time.Minute), testRegion, sdkCreds)
		}, ErrRequestTimeTooSkewed, nil},
		{"within skew", func(t *testing.T) *http.Request {
			return signedPut(t, testNow.Add(14*time.Minute), testRegion, sdkCreds)
		}, nil, nil},
		{"scope date differs from x-amz-date", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("X-Amz-Date", testNow.Add(24*time.Hour).Format(iso8601Format))
			return r
		}, ErrMalformed, nil},
		{"missing content sha256", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Del("X-Amz-Content-Sha256")
			return r
		}, ErrMissingHeader, nil},
		{"bad content sha256", func(t *testing.T) *http.Request {
			r := newRequest("GET", "http://s3.example.com/b/k", nil)
			sdkSign(t, r, "not-a-hash", testNow, testRegion, sdkCreds)
			return r
		}, ErrInvalidAuthorization, nil},
		{"session token with a permanent key", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("X-Amz-Security-Token", "token")
			return r
		}, ErrInvalidToken, nil},
		{"ecdsa streaming", func(t *testing.T) *http.Request {
			r := newRequest("PUT", "http://s3.example.com/b/k", nil)
			sdkSign(t, r, "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", testNow, testRegion, sdkCreds)
			return r
		}, ErrUnsupported, nil},
		{"no auth", func(t *testing.T) *http.Request {
			return newRequest("GET", "http://s3.example.com/b/k", nil)
		}, ErrMissingAuth, nil},
		{"sigv2 header", func(t *testing.T) *http.Request {
			r := newRequest("GET", "http://s3.example.com/b/k", nil)
			r.Header.Set("Authorization", "AWS "+testAK+":frJIUN8DYpKDtOLCwo//yllqDzg=")
			return r
		}, ErrAccessDenied, nil},
		{"sigv2 query expired", func(t *testing.T) *http.Request {
			return newRequest("GET", "http://s3.example.com/b/k?AWSAccessKeyId=AK&Expires=1&Signature=x", nil)
		}, ErrExpired, nil},
		{"malformed authorization", func(t *testing.T) *http.Request {
			r := ok(t)
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20240301/us-east-1/s3/aws4_request")
			return r
		}, ErrMalformed, nil},
		{"host not signed", func(t *testing.T) *http.Request {
			r := ok(t)
			a := r.Header.Get("Authorization")
			r.Header.Set("Authorization", strings.Replace(a, "host;", "", 1))
			return r
		}, ErrUnsignedHeaders, nil},
		{"two auth mechanisms", func(t *testing.T) *http.Request {
			r := ok(t)
			r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256"
			return r
		}, ErrInvalidAuthorization, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := newVerifier(testNow).Verify(c.build(t))
			wantErr(t, err, c.verify)
			if err != nil {
				return
			}
			got, err := readBody(res)
			wantErr(t, err, c.readErr)
			if err == nil && !bytes.Equal(got, body) {
				t.Fatalf("body %q", got)
			}
		})
	}
}

func TestVerifierRegionAndLookupDefaults(t *testing.T) {
	r := newRequest("GET", "http://s3.example.com/b/k", nil)
	sdkSign(t, r, hexSHA256(nil), testNow, "eu-central-1", sdkCreds)
	v := newVerifier(testNow)
	v.Region = ""
	if _, err := v.Verify(r); err != nil {
		t.Fatalf("empty Region should accept any region: %v", err)
	}
	v.Lookup = nil
	_, err := v.Verify(r)
	wantErr(t, err, ErrInvalidAccessKeyID)
}

func TestRequestDateFromDateHeader(t *testing.T) {
	r := newRequest("GET", "/", nil)
	r.Header.Set("Date", "Fri, 24 May 2013 01:02:03 GMT")
	amz, at, err := requestDate(r)
	if err != nil || amz != "20130524T010203Z" || !at.Equal(time.Date(2013, 5, 24, 1, 2, 3, 0, time.UTC)) {
		t.Fatalf("got %q %v %v", amz, at, err)
	}
	r.Header.Set("X-Amz-Date", "2013-05-24T01:02:03Z")
	if _, _, err := requestDate(r); err == nil {
		t.Fatal("extended ISO 8601 accepted in x-amz-date")
	}
}
