package sigv4

import (
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

const (
	docAK     = "AKIAIOSFODNN7EXAMPLE"
	docSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// The example of the AWS S3 Signature Version 2 documentation
// ("Example Object GET"), in path style.
func TestSignV2DocumentationVector(t *testing.T) {
	r := httptest.NewRequest("GET", "http://s3.amazonaws.com/johnsmith/photos/puppy.jpg", nil)
	r.Header.Set("Date", "Tue, 27 Mar 2007 19:36:42 +0000")
	sts := StringToSignV2(r, r.Header.Get("Date"))
	if want := "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg"; sts != want {
		t.Fatalf("string to sign %q, want %q", sts, want)
	}
	if got := SignV2(docSecret, sts); got != "bWq2s1WEIj+Ydj0vQ697zp+IXMU=" {
		t.Fatalf("signature %s", got)
	}
}

func TestCanonicalResourceV2(t *testing.T) {
	cases := []struct{ url, want string }{
		{"http://h/b/k?uploadId=abc&partNumber=2&x-id=UploadPart", "/b/k?partNumber=2&uploadId=abc"},
		{"http://h/b?acl", "/b?acl"},
		{"http://h/b/k%20x?response-content-type=text%2Fplain&foo=bar", "/b/k%20x?response-content-type=text/plain"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.url, nil)
		if got := canonicalResourceV2(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.url, got, c.want)
		}
	}
}

func TestVerifyV2(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Lookup: func(ak string) (string, bool) { return docSecret, ak == docAK }, Now: func() time.Time { return now }}
	presign := func(method, u string, exp time.Time, secret string) *http.Request {
		r := httptest.NewRequest(method, u, nil)
		e := strconv.FormatInt(exp.Unix(), 10)
		sig := SignV2(secret, StringToSignV2(r, e))
		q := r.URL.Query()
		q.Set("AWSAccessKeyId", docAK)
		q.Set("Expires", e)
		q.Set("Signature", sig)
		r.URL.RawQuery = q.Encode()
		return r
	}
	header := func(date time.Time, secret string) *http.Request {
		r := httptest.NewRequest("PUT", "http://h/b/k", nil)
		r.Header.Set("Date", date.Format(http.TimeFormat))
		r.Header.Set("Content-Type", "text/plain")
		r.Header.Set("X-Amz-Meta-Color", "blue")
		r.Header.Set("Authorization", "AWS "+docAK+":"+SignV2(secret, StringToSignV2(r, r.Header.Get("Date"))))
		return r
	}
	cases := []struct {
		name string
		r    *http.Request
		want error
	}{
		{"query ok", presign("GET", "http://h/b/k", now.Add(time.Minute), docSecret), nil},
		{"query expired", presign("GET", "http://h/b/k", now.Add(-time.Second), docSecret), ErrExpired},
		{"query wrong secret", presign("GET", "http://h/b/k", now.Add(time.Minute), "other"), ErrSignatureDoesNotMatch},
		{"header ok", header(now, docSecret), nil},
		{"header skewed", header(now.Add(-time.Hour), docSecret), ErrRequestTimeTooSkewed},
		{"header wrong secret", header(now, "other"), ErrSignatureDoesNotMatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := v.Verify(c.r)
			if !errors.Is(err, c.want) || (err == nil && res.AccessKey != docAK) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
	// A header added after signing changes the string to sign.
	r := header(now, docSecret)
	r.Header.Set("X-Amz-Meta-Color", "red")
	if _, err := v.Verify(r); !errors.Is(err, ErrSignatureDoesNotMatch) {
		t.Fatalf("tampered amz header: %v", err)
	}
}

func FuzzVerifyV2(f *testing.F) {
	f.Add("/b/k?AWSAccessKeyId=AK&Expires=99999999999&Signature=abc", "")
	f.Add("/b/k?uploads&acl=x", "AWS AK:sig")
	f.Add("/b", "AWS ")
	v := &Verifier{Lookup: func(string) (string, bool) { return "secret", true }}
	f.Fuzz(func(t *testing.T, target, auth string) {
		r, err := http.NewRequest("GET", "http://h"+target, nil)
		if err != nil {
			return
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		r.Header.Set("Date", time.Now().Format(http.TimeFormat))
		_ = canonicalResourceV2(r)
		if _, err := v.Verify(r); err == nil {
			t.Fatalf("%q %q verified without a valid signature", target, auth)
		}
	})
}

func FuzzVerifyPolicy(f *testing.F) {
	f.Add("cG9saWN5", "AWS4-HMAC-SHA256", "AK/20260101/us-east-1/s3/aws4_request", "00")
	f.Add("cG9saWN5", "", "", "")
	v := &Verifier{Lookup: func(string) (string, bool) { return "secret", true }}
	f.Fuzz(func(t *testing.T, policy, alg, cred, sig string) {
		fields := map[string]string{"policy": policy, "x-amz-algorithm": alg, "x-amz-credential": cred,
			"x-amz-signature": sig, "awsaccesskeyid": cred, "signature": sig}
		if _, err := v.VerifyPolicy(fields); err == nil && sig != SignV2("secret", policy) {
			want := ""
			if c, err := parseCredential(cred); err == nil {
				want = hexHMAC(c, policy)
			}
			if sig != want {
				t.Fatalf("policy %q verified with signature %q", policy, sig)
			}
		}
	})
}

func hexHMAC(c credential, policy string) string {
	return hex.EncodeToString(hmacSHA256(signingKey("secret", c.date, c.region), policy))
}
