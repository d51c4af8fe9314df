package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestVerifyDateOnly verifies SigV4 requests dated by Date alone, no
// X-Amz-Date. The signature is computed here step by step from the AWS
// specification, with the canonical request written out literally.
func TestVerifyDateOnly(t *testing.T) {
	empty := hexSHA256(nil)
	for _, date := range []string{"Fri, 01 Mar 2024 12:00:00 GMT", "Fri, 01 Mar 2024 12:00:00 +0000"} {
		canon := "GET\n/bucket/key\n\ndate:" + date + "\nhost:s3.example.com\nx-amz-content-sha256:" + empty +
			"\n\ndate;host;x-amz-content-sha256\n" + empty
		sum := sha256.Sum256([]byte(canon))
		sts := "AWS4-HMAC-SHA256\n20240301T120000Z\n20240301/us-east-1/s3/aws4_request\n" + hex.EncodeToString(sum[:])
		mac := func(k []byte, s string) []byte { m := hmac.New(sha256.New, k); m.Write([]byte(s)); return m.Sum(nil) }
		key := mac(mac(mac(mac([]byte("AWS4"+testSecret), "20240301"), "us-east-1"), "s3"), "aws4_request")
		r := newRequest("GET", "http://s3.example.com/bucket/key", nil)
		r.Header.Set("Date", date)
		r.Header.Set("X-Amz-Content-Sha256", empty)
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20240301/us-east-1/s3/aws4_request, "+
			"SignedHeaders=date;host;x-amz-content-sha256, Signature="+hex.EncodeToString(mac(key, sts)))
		if _, err := newVerifier(testNow).Verify(r); err != nil {
			t.Fatalf("Date %q: %v", date, err)
		}
		r.Header.Set("Date", "Fri, 01 Mar 2024 12:00:01 GMT")
		if _, err := newVerifier(testNow).Verify(r); !errors.Is(err, ErrSignatureDoesNotMatch) {
			t.Fatalf("changed Date: %v", err)
		}
	}
}

// TestVerifyDates follows ceph s3-tests' header date cases for SigV4:
// Date is ignored beside X-Amz-Date, a bad X-Amz-Date is AccessDenied.
func TestVerifyDates(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(r *http.Request)
		want  error
		wantM string
	}{
		{"bad Date beside x-amz-date", func(r *http.Request) { r.Header.Set("Date", "Bad Date") }, nil, ""},
		{"bad x-amz-date", func(r *http.Request) { r.Header.Set("X-Amz-Date", "Bad Date") }, ErrAccessDenied,
			"AWS authentication requires a valid Date or x-amz-date header"},
		{"empty x-amz-date", func(r *http.Request) { r.Header.Set("X-Amz-Date", "") }, ErrAccessDenied, ""},
		{"x-amz-date before epoch", func(r *http.Request) { r.Header.Set("X-Amz-Date", "19500707T215304Z") }, ErrAccessDenied, ""},
		{"no date at all", func(r *http.Request) { r.Header.Del("X-Amz-Date") }, ErrAccessDenied, ""},
		{"x-amz-date removed, Date left", func(r *http.Request) {
			r.Header.Del("X-Amz-Date")
			r.Header.Set("Date", testNow.Format(http.TimeFormat))
		}, ErrSignatureDoesNotMatch, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest("GET", "http://s3.example.com/b/k", nil)
			sdkSign(t, r, hexSHA256(nil), testNow, testRegion, sdkCreds)
			c.edit(r)
			_, err := newVerifier(testNow).Verify(r)
			wantErr(t, err, c.want)
			if c.wantM != "" {
				wantMessage(t, err, c.wantM)
			}
		})
	}
}

func wantMessage(t *testing.T, err error, msg string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Message != msg {
		t.Fatalf("error %v, want message %q", err, msg)
	}
	return e
}

// TestWrongRegion: S3 names the region to sign for, in the message and
// in <Region>, in both forms; clients re-sign from it.
func TestWrongRegion(t *testing.T) {
	r := newRequest("GET", "http://s3.example.com/b/k", nil)
	sdkSign(t, r, hexSHA256(nil), testNow, "US", sdkCreds)
	_, err := newVerifier(testNow).Verify(r)
	wantErr(t, err, ErrMalformed)
	e := wantMessage(t, err, "The authorization header is malformed; the region 'US' is wrong; expecting 'us-east-1'")
	if e.Region != "us-east-1" {
		t.Fatalf("Region %q", e.Region)
	}

	pr := sdkPresign(t, newRequest("GET", "http://s3.example.com/b/k", nil), time.Hour, testNow)
	pr.URL.RawQuery = strings.Replace(pr.URL.RawQuery, "%2Fus-east-1%2F", "%2Feu-west-1%2F", 1)
	_, err = newVerifier(testNow).Verify(pr)
	wantErr(t, err, ErrMalformedQuery)
	e = wantMessage(t, err, "Error parsing the X-Amz-Credential parameter; the region 'eu-west-1' is wrong; expecting 'us-east-1'")
	if e.Region != "us-east-1" {
		t.Fatalf("Region %q", e.Region)
	}
}

// TestPresignedQueryErrors: every malformed presigned query is an
// AuthorizationQueryParametersError with S3's message.
func TestPresignedQueryErrors(t *testing.T) {
	at := testNow.Add(-time.Minute)
	ok := func(t *testing.T) *http.Request {
		return sdkPresign(t, newRequest("GET", "http://s3.example.com/b/k", nil), time.Hour, at)
	}
	cred := "X-Amz-Credential=" + testAK + "%2F20240301%2Fus-east-1%2Fs3%2Faws4_request"
	cases := []struct{ name, from, to, msg string }{
		{"no credential", cred, "",
			"Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."},
		{"no expires", "X-Amz-Expires=3600", "",
			"Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."},
		{"credential mal-formed", cred, "X-Amz-Credential=HAHAHA",
			`Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`},
		{"credential date", "%2F20240301%2F", "%2F2024031%2F",
			`Error parsing the X-Amz-Credential parameter; incorrect date format "2024031". This date in the credential must be in the format "yyyyMMdd".`},
		{"credential service", "%2Fs3%2F", "%2Fec2%2F",
			`Error parsing the X-Amz-Credential parameter; incorrect service "ec2". This endpoint belongs to "s3".`},
		{"credential terminal", "aws4_request", "aws5_request",
			`Error parsing the X-Amz-Credential parameter; incorrect terminal "aws5_request". This endpoint uses "aws4_request".`},
		{"credential date not the request's", "%2F20240301%2F", "%2F20240302%2F",
			`Invalid credential date "20240302". This date is not the same as X-Amz-Date: "20240301".`},
		{"expires not a number", "X-Amz-Expires=3600", "X-Amz-Expires=soon", "X-Amz-Expires should be a number"},
		{"expires negative", "X-Amz-Expires=3600", "X-Amz-Expires=-1", "X-Amz-Expires must be non-negative"},
		{"expires over a week", "X-Amz-Expires=3600", "X-Amz-Expires=604801",
			"X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds"},
		{"expires huge", "X-Amz-Expires=3600", "X-Amz-Expires=99999999999999999999",
			"X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds"},
		{"bad date", "X-Amz-Date=20240301T115900Z", "X-Amz-Date=2024-03-01",
			`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`},
		{"algorithm", "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=HMAC",
			`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256"`},
		{"algorithm SigV4a", "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256",
			`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ok(t)
			if !strings.Contains(r.URL.RawQuery, c.from) {
				t.Fatalf("%q not in %s", c.from, r.URL.RawQuery)
			}
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, c.from, c.to, 1)
			_, err := newVerifier(testNow).Verify(r)
			wantErr(t, err, ErrMalformedQuery)
			wantMessage(t, err, c.msg)
		})
	}
	// A week exactly is allowed; past it the URL has expired, with the
	// times S3 reports.
	r := sdkPresign(t, newRequest("GET", "http://s3.example.com/b/k", nil), 7*24*time.Hour, at)
	if _, err := newVerifier(testNow).Verify(r); err != nil {
		t.Fatalf("a week: %v", err)
	}
	_, err := newVerifier(at.Add(7*24*time.Hour + time.Second)).Verify(r)
	e := wantMessage(t, err, "Request has expired")
	if !errors.Is(err, ErrExpired) || !e.Expires.Equal(at.Add(7*24*time.Hour)) || e.XAmzExpires != "604800" || e.ServerTime.IsZero() {
		t.Fatalf("expired: %+v", e)
	}
}

// TestHeadersNotSigned: a header S3 requires in SignedHeaders but left
// out is 403 AccessDenied naming it, checked before the signature.
func TestHeadersNotSigned(t *testing.T) {
	dropSigned := func(name string) func(r *http.Request) {
		return func(r *http.Request) {
			a := r.Header.Get("Authorization")
			a = strings.Replace(a, ";"+name, "", 1)
			a = strings.Replace(a, "SignedHeaders="+name+";", "SignedHeaders=", 1)
			r.Header.Set("Authorization", a)
		}
	}
	cases := []struct {
		name, want string
		edit       func(r *http.Request)
	}{
		{"host", "host", dropSigned("host")},
		{"x-amz-content-sha256", "x-amz-content-sha256", dropSigned("x-amz-content-sha256")},
		{"x-amz-date", "x-amz-date", dropSigned("x-amz-date")},
		{"added x-amz-meta and x-amz-acl", "x-amz-acl, x-amz-meta-a", func(r *http.Request) {
			r.Header.Set("X-Amz-Meta-A", "1")
			r.Header.Set("X-Amz-Acl", "private")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRequest("GET", "http://s3.example.com/b/k", nil)
			sdkSign(t, r, hexSHA256(nil), testNow, testRegion, sdkCreds)
			c.edit(r)
			_, err := newVerifier(testNow).Verify(r)
			wantErr(t, err, ErrUnsignedHeaders)
			if e := wantMessage(t, err, "There were headers present in the request which were not signed"); e.HeadersNotSigned != c.want {
				t.Fatalf("HeadersNotSigned %q, want %q", e.HeadersNotSigned, c.want)
			}
		})
	}
	// The presigned form: host out of X-Amz-SignedHeaders.
	pr := sdkPresign(t, newRequest("GET", "http://s3.example.com/b/k", nil), time.Hour, testNow)
	pr.URL.RawQuery = strings.Replace(pr.URL.RawQuery, "X-Amz-SignedHeaders=host", "X-Amz-SignedHeaders=x-amz-date", 1)
	_, err := newVerifier(testNow).Verify(pr)
	wantErr(t, err, ErrUnsignedHeaders)
}

// TestAuthorizationHeaderErrors: unreadable headers as S3 answers them,
// and which problem S3 reports first when there are several.
func TestAuthorizationHeaderErrors(t *testing.T) {
	const (
		sig   = "Signature=5fb279ae552098ea7c5c807df54cdb159e74939e19449b29831552639ec34b29"
		cred  = "Credential=" + testAK + "/20240301/us-east-1/s3/aws4_request"
		mal   = "The authorization header is malformed; "
		badAK = `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`
	)
	cases := []struct {
		auth     string
		want     error
		msg      string
		argValue string // ArgumentValue of an InvalidArgument, the header as sent
	}{
		{"invalid_header", ErrInvalidAuthorization, "Authorization header is invalid -- one and only one ' ' (space) required.", "invalid_header"},
		{"AWS4 HAHAHA", ErrInvalidAuthorization, "Unsupported Authorization Type", "AWS4 HAHAHA"},
		{"AWS2-HMAC-SHA1 " + cred + ",SignedHeaders=host," + sig, ErrInvalidAuthorization, "Unsupported Authorization Type",
			"AWS2-HMAC-SHA1 " + cred + ",SignedHeaders=host," + sig},
		{"AWS HAHAHA", ErrInvalidAuthorization, "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature", ""},
		{"AWS4-HMAC-SHA256 Credential=HAHAHA", ErrMalformed,
			mal + "the authorization header requires three components: Credential, SignedHeaders, and Signature.", ""},
		{"AWS4-HMAC-SHA256 " + cred, ErrMalformed,
			mal + "the authorization header requires three components: Credential, SignedHeaders, and Signature.", ""},
		{"AWS4-HMAC-SHA256 Credential=HAHAHA,SignedHeaders=host," + sig, ErrMalformed, mal + badAK, ""},
		{"AWS4-HMAC-SHA256 " + cred + ",SignedHeaders-Content-Length," + sig, ErrMalformed,
			mal + `the authorization component "SignedHeaders-Content-Length" is malformed.`, ""},
		{"AWS4-HMAC-SHA256 missing_creds=a/b,SignedHeaders=host," + sig, ErrMalformed, mal + "missing Credential.", ""},
		{"AWS4-HMAC-SHA256 " + cred + ",missing=host," + sig, ErrMalformed, mal + "missing SignedHeaders.", ""},
		// Components are each present before any is read: the
		// SignedHeaders without host would be refused otherwise.
		{"AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=x-amz-date,missing=00", ErrMalformed, mal + "missing Signature.", ""},
		{"AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host," + sig + ",Extra=1", ErrMalformed,
			mal + `the authorization component "Extra=1" is malformed.`, ""},
		// Within the credential: the number of parts, then the service,
		// the terminal and the date, whatever else is wrong.
		{"AWS4-HMAC-SHA256 Credential=access/32234/us-east-1/s3/extra/things,SignedHeaders=host," + sig, ErrMalformed, mal + badAK, ""},
		{"AWS4-HMAC-SHA256 Credential=a/b/c/20240301/us-east-1/s3/aws4_request,SignedHeaders=host," + sig, ErrMalformed, mal + badAK, ""},
		{"AWS4-HMAC-SHA256 Credential=access/32234/us-east-1/ec2/aws4_request,SignedHeaders=host," + sig, ErrMalformed,
			mal + `incorrect service "ec2". This endpoint belongs to "s3".`, ""},
		{"AWS4-HMAC-SHA256 Credential=access/32234/us-east-1/s3/aws_request,SignedHeaders=host," + sig, ErrMalformed,
			mal + `incorrect terminal "aws_request". This endpoint uses "aws4_request".`, ""},
		{"AWS4-HMAC-SHA256 Credential=access/3223423234/us-east-1/s3/aws4_request,SignedHeaders=host," + sig, ErrMalformed,
			mal + `incorrect date format "3223423234". This date in the credential must be in the format "yyyyMMdd".`, ""},
		{"AWS4-ECDSA-P256-SHA256 Credential=x", ErrUnsupported, "", ""},
	}
	for _, c := range cases {
		r := newRequest("GET", "http://s3.example.com/b/k", nil)
		r.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
		r.Header.Set("X-Amz-Date", testNow.Format(iso8601Format))
		r.Header.Set("Authorization", c.auth)
		_, err := newVerifier(testNow).Verify(r)
		wantErr(t, err, c.want)
		if c.msg == "" {
			continue
		}
		e := wantMessage(t, err, c.msg)
		if c.argValue != "" && (e.ArgumentName != "Authorization" || e.ArgumentValue != c.argValue) {
			t.Errorf("%q: argument %q=%q", c.auth, e.ArgumentName, e.ArgumentValue)
		}
	}
}

// FuzzVerifyPresigned feeds arbitrary presigned queries to Verify: only
// one canonically equal to the signed query may verify, and every failure
// must be one the gateway maps to an S3 code (never an unclassified
// error, which would be a 500).
func FuzzVerifyPresigned(f *testing.F) {
	ok := sdkPresign(f, newRequest("GET", "http://s3.example.com/b/k", nil), time.Hour, testNow).URL.RawQuery
	f.Add(ok)
	f.Add(strings.Replace(ok, "X-Amz-Expires=3600", "X-Amz-Expires=-5", 1))
	f.Add("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=a%2Fb&X-Amz-Signature=00")
	f.Add("AWSAccessKeyId=AK&Expires=99999999999&Signature=abc")
	f.Add(ok + "&X-Amz-Security-Token=t")
	known := []error{ErrMalformedQuery, ErrAccessDenied, ErrExpired, ErrInvalidAccessKeyID, ErrSignatureDoesNotMatch,
		ErrUnsupported, ErrUnsignedHeaders, ErrMissingAuth, ErrInvalidAuthorization, ErrRequestTimeTooSkewed, ErrInvalidToken}
	f.Fuzz(func(t *testing.T, query string) {
		r, err := http.NewRequest("GET", "http://s3.example.com/b/k?"+query, nil)
		if err != nil {
			return
		}
		_, err = newVerifier(testNow).Verify(r)
		if err == nil {
			if canonicalQuery(parseQuery(r.URL.RawQuery)) != canonicalQuery(parseQuery(ok)) {
				t.Fatalf("%q verified", query)
			}
			return
		}
		for _, k := range known {
			if errors.Is(err, k) {
				return
			}
		}
		t.Fatalf("%q: unclassified error %v", query, err)
	})
}
