package sigv4

import (
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
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
	sts := StringToSignV2(r, r.Header.Get("Date"), "")
	if want := "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg"; sts != want {
		t.Fatalf("string to sign %q, want %q", sts, want)
	}
	if got := SignV2(docSecret, sts); got != "bWq2s1WEIj+Ydj0vQ697zp+IXMU=" {
		t.Fatalf("signature %s", got)
	}
}

// TestVerifyV2Vectors verifies signatures no code of this package made:
// the examples of the AWS Signature Version 2 documentation, virtual-
// hosted ones included, and one s3cmd --signature-v2 sent.
func TestVerifyV2Vectors(t *testing.T) {
	docDomains := []string{"s3.amazonaws.com"}
	cases := []struct {
		name, method, url, ak, secret, sig string
		headers                            [][2]string
		domains                            []string
		now                                time.Time
	}{
		{"get, virtual-hosted", "GET", "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg", docAK, docSecret, "bWq2s1WEIj+Ydj0vQ697zp+IXMU=",
			[][2]string{{"Date", "Tue, 27 Mar 2007 19:36:42 +0000"}}, docDomains, time.Date(2007, 3, 27, 19, 36, 42, 0, time.UTC)},
		{"put, virtual-hosted", "PUT", "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg", docAK, docSecret, "MyyxeRY7whkBe+bq8fHCL/2kKUg=",
			[][2]string{{"Content-Type", "image/jpeg"}, {"Date", "Tue, 27 Mar 2007 21:15:45 +0000"}}, docDomains, time.Date(2007, 3, 27, 21, 15, 45, 0, time.UTC)},
		{"list, virtual-hosted, query not signed", "GET", "http://johnsmith.s3.amazonaws.com/?prefix=photos&max-keys=50&marker=puppy", docAK, docSecret,
			"htDYFYduRNen8P9ZfE/s9SuKy0U=", [][2]string{{"User-Agent", "Mozilla/5.0"}, {"Date", "Tue, 27 Mar 2007 19:42:41 +0000"}},
			docDomains, time.Date(2007, 3, 27, 19, 42, 41, 0, time.UTC)},
		{"acl sub-resource, virtual-hosted", "GET", "http://johnsmith.s3.amazonaws.com/?acl", docAK, docSecret, "c2WLPFtWHVgbEmeEG93a4cG37dM=",
			[][2]string{{"Date", "Tue, 27 Mar 2007 19:44:46 +0000"}}, docDomains, time.Date(2007, 3, 27, 19, 44, 46, 0, time.UTC)},
		{"delete with x-amz-date on the date line", "DELETE", "http://s3.amazonaws.com/johnsmith/photos/puppy.jpg", docAK, docSecret,
			"lx3byBScXR6KzyMaifNkardMwNk=", [][2]string{{"Date", "Tue, 27 Mar 2007 21:20:27 +0000"}, {"X-Amz-Date", "Tue, 27 Mar 2007 21:20:26 +0000"}},
			nil, time.Date(2007, 3, 27, 21, 20, 26, 0, time.UTC)},
		{"upload with repeated amz headers", "PUT", "http://s3.amazonaws.com/static.johnsmith.net/db-backup.dat.gz", docAK, docSecret,
			"ilyl83RwaSoYIEdixDQcA4OnAnc=", [][2]string{{"Date", "Tue, 27 Mar 2007 21:06:08 +0000"}, {"x-amz-acl", "public-read"},
				{"content-type", "application/x-download"}, {"Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="},
				{"X-Amz-Meta-ReviewedBy", "joe@johnsmith.net"}, {"X-Amz-Meta-ReviewedBy", "jane@johnsmith.net"},
				{"X-Amz-Meta-FileChecksum", "0x02661779"}, {"X-Amz-Meta-ChecksumAlgorithm", "crc32"}},
			nil, time.Date(2007, 3, 27, 21, 6, 8, 0, time.UTC)},
		{"s3cmd mb: x-amz-date with +0000", "PUT", "http://127.0.0.1:33769/bkt1/", "testaccesskey", "testsecretkey0123456789",
			"9RTtCBeytlTIAroDlpXsfVHpHWc=", [][2]string{{"X-Amz-Date", "Tue, 01 Dec 2026 11:08:54 +0000"}},
			nil, time.Date(2026, 12, 1, 11, 8, 54, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.url, nil)
			for _, h := range c.headers {
				r.Header.Add(h[0], h[1])
			}
			r.Header.Set("Authorization", "AWS "+c.ak+":"+c.sig)
			v := &Verifier{Domains: c.domains, Now: func() time.Time { return c.now },
				Lookup: func(ak string) (string, bool) { return c.secret, ak == c.ak }}
			if _, err := v.Verify(r); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			r.Header.Set("Authorization", "AWS "+c.ak+":"+SignV2("other", "x"))
			if _, err := v.Verify(r); !errors.Is(err, ErrSignatureDoesNotMatch) {
				t.Fatalf("wrong signature: %v", err)
			}
		})
	}
}

func TestStringToSignV2(t *testing.T) {
	cases := []struct {
		name, method, url, bucket string
		headers                   [][2]string
		want                      string
	}{
		{"amz headers sorted by name, not by line", "PUT", "http://h/b/dst", "",
			[][2]string{{"X-Amz-Copy-Source-If-Match", `"e"`}, {"X-Amz-Copy-Source", "/b/src"}, {"X-Amz-Meta-A-B", "2"}, {"X-Amz-Meta-A", "1"}},
			"PUT\n\n\n\nx-amz-copy-source:/b/src\nx-amz-copy-source-if-match:\"e\"\nx-amz-meta-a:1\nx-amz-meta-a-b:2\n/b/dst"},
		{"values trimmed and joined", "PUT", "http://h/b/k", "", [][2]string{{"X-Amz-Meta-M", " one "}, {"x-amz-meta-m", "two"}},
			"PUT\n\n\n\nx-amz-meta-m:one,two\n/b/k"},
		{"virtual-hosted bucket", "GET", "http://b.s3.test/", "b", nil, "GET\n\n\n\n/b/"},
		{"virtual-hosted key", "GET", "http://b.s3.test/a%20b", "b", nil, "GET\n\n\n\n/b/a%20b"},
		{"path as sent", "GET", "http://h/b/k%21%28x%29+y", "", nil, "GET\n\n\n\n/b/k%21%28x%29+y"},
		{"root", "GET", "http://h/", "", nil, "GET\n\n\n\n/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.url, nil)
			for _, h := range c.headers {
				r.Header.Add(h[0], h[1])
			}
			if got := StringToSignV2(r, "", c.bucket); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestCanonicalResourceV2(t *testing.T) {
	cases := []struct {
		url  string
		va   v2Variant
		want string
	}{
		{"http://h/b/k?uploadId=abc&partNumber=2&x-id=UploadPart", v2Variant{}, "/b/k?partNumber=2&uploadId=abc"},
		{"http://h/b?acl", v2Variant{}, "/b?acl"},
		{"http://h/b/k%20x?response-content-type=text%2Fplain&foo=bar", v2Variant{}, "/b/k%20x?response-content-type=text/plain"},
		{"http://h/b?uploads", v2Variant{}, "/b?uploads"},
		{"http://h/b?uploads=", v2Variant{}, "/b?uploads="},
		{"http://h/b?uploads=", v2Variant{bare: true}, "/b?uploads"},
		{"http://h/b?delete", v2Variant{}, "/b?delete"},
		{"http://h/b?location", v2Variant{}, "/b?location"},
		{"http://h/b?tagging", v2Variant{}, "/b?tagging"},
		{"http://h/b?cors", v2Variant{}, "/b?cors"},
		{"http://h/b?versions&prefix=x&versionId=3&lifecycle", v2Variant{}, "/b?lifecycle&versionId=3&versions"},
		{"http://h/b/k?response-content-disposition=a%2Bb+c", v2Variant{}, "/b/k?response-content-disposition=a+b+c"},
		{"http://h/b/k?retention&uploads", v2Variant{}, "/b/k?uploads"},
		{"http://h/b/k?retention&uploads", v2Variant{extra: true}, "/b/k?retention&uploads"},
		{"http://h/b/k%2Bx", v2Variant{strictPath: true}, "/b/k%2Bx"},
		{"http://h/b/k+x", v2Variant{strictPath: true}, "/b/k%2Bx"},
		{"http://b.s3.test/?acl", v2Variant{bucket: "b"}, "/b/?acl"},
		{"http://h/b?acl", v2Variant{bucketSlash: true}, "/b/?acl"},
		{"http://h/b/?acl", v2Variant{bucketSlash: true}, "/b/?acl"},
		{"http://h/b/k", v2Variant{bucketSlash: true}, "/b/k"},
		{"http://h/", v2Variant{bucketSlash: true}, "/"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.url, nil)
		if got := canonicalResourceV2(r, c.va); got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.url, c.va, got, c.want)
		}
	}
}

func TestVerifyV2(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Lookup: func(ak string) (string, bool) { return docSecret, ak == docAK }, Now: func() time.Time { return now }}
	presign := func(method, u string, exp time.Time, secret string) *http.Request {
		r := httptest.NewRequest(method, u, nil)
		e := strconv.FormatInt(exp.Unix(), 10)
		sig := SignV2(secret, StringToSignV2(r, e, ""))
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
		r.Header.Set("Authorization", "AWS "+docAK+":"+SignV2(secret, StringToSignV2(r, r.Header.Get("Date"), "")))
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
		_ = canonicalResourceV2(r, v2Variant{})
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

// FuzzStringToSignV2 builds the V2 string to sign of arbitrary request
// targets and amz headers: it must not panic, and its shape must hold:
// five fixed lines, one line per distinct x-amz-* header in name order,
// and a resource that starts with the bucket and carries only known
// sub-resources, sorted.
func FuzzStringToSignV2(f *testing.F) {
	f.Add("/b/k?uploadId=abc&partNumber=2&x-id=UploadPart", "X-Amz-Copy-Source", "/b/src", "b")
	f.Add("/b?acl&uploads=&delete", "X-Amz-Meta-A-B", " v ", "")
	f.Add("/%zz/?response-content-type=%2", "x-amz-date", "Tue, 01 Dec 2026 11:08:54 +0000", "bucket")
	f.Add("/?versions&versionId=%E6%97%A5", "X-Amz-Meta-\u00e9", "\u65e5", "")
	f.Fuzz(func(t *testing.T, target, name, value, bucket string) {
		r, err := http.NewRequest("PUT", "http://h"+target, nil)
		// Newlines cannot reach the builder: net/http refuses them in
		// header values and in Host, where the bucket comes from.
		if err != nil || !validHeaderName(strings.ToLower(name)) || name == "" ||
			strings.ContainsAny(value+bucket, "\r\n") {
			return
		}
		r.Header.Add(name, value)
		r.Header.Set("X-Amz-Meta-Z", "z")
		for _, va := range []v2Variant{{bucket: bucket}, {bucket: bucket, extra: true, bare: true, strictPath: true}} {
			sts := stringToSignV2(r, "date", va)
			lines := strings.Split(sts, "\n")
			if len(lines) < 5 || lines[0] != "PUT" || lines[3] != "date" {
				t.Fatalf("shape of %q", sts)
			}
			amz := lines[4 : len(lines)-1]
			if !sort.SliceIsSorted(amz, func(i, j int) bool {
				ni, _, _ := strings.Cut(amz[i], ":")
				nj, _, _ := strings.Cut(amz[j], ":")
				return ni < nj
			}) {
				t.Fatalf("amz headers not in name order: %q", amz)
			}
			res := lines[len(lines)-1]
			if bucket != "" && !strings.HasPrefix(res, "/"+bucket) {
				t.Fatalf("resource %q does not start with /%s", res, bucket)
			}
			_, subs, _ := strings.Cut(strings.TrimPrefix(res, "/"+bucket), "?")
			if subs == "" {
				continue
			}
			var keys []string
			for _, kv := range strings.Split(subs, "&") {
				k, _, _ := strings.Cut(kv, "=")
				if !subresourcesV2[k] && !extraSubresourcesV2[k] {
					t.Fatalf("%q is no sub-resource, in %q", k, res)
				}
				keys = append(keys, k)
			}
			if !sort.StringsAreSorted(keys) {
				t.Fatalf("sub-resources not sorted: %q", res)
			}
		}
	})
}
