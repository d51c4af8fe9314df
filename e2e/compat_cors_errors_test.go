package e2e

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/minio/minio-go/v7"
)

// corsError is an S3 error body with the fields a CORS refusal carries.
type corsError struct {
	Code, Message, Method, ResourceType string
}

// TestCompatCORSAnswers checks, over real servers and aws-sdk-go-v2, the
// exact answers S3 gives around CORS: configurations S3 accepts or
// refuses, Content-MD5 on PutBucketCors, and every preflight refusal with
// its code, message and fields.
func TestCompatCORSAnswers(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	for _, b := range []string{"cors-on", "cors-off"} {
		if err := c.mc.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + c.srv.S3Addr()
	ac := awsClient(t, c, base, nil, true)

	// A negative MaxAgeSeconds is kept and given back.
	rules := []types.CORSRule{{
		AllowedOrigins: []string{"http://origin.com"}, AllowedMethods: []string{"POST", "PUT"},
		AllowedHeaders: []string{"X-Amz-Date"}, ExposeHeaders: []string{"Authorization"}, MaxAgeSeconds: aws.Int32(-100),
	}, {
		AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET", "HEAD"}, AllowedHeaders: []string{"Content-*"},
		ID: aws.String("any"), MaxAgeSeconds: aws.Int32(3000),
	}}
	if _, err := ac.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("cors-on"),
		CORSConfiguration: &types.CORSConfiguration{CORSRules: rules}}); err != nil {
		t.Fatalf("put cors with negative max age: %v", err)
	}
	out, err := ac.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("cors-on")})
	if err != nil || len(out.CORSRules) != 2 || aws.ToInt32(out.CORSRules[0].MaxAgeSeconds) != -100 ||
		out.CORSRules[1].AllowedHeaders[0] != "Content-*" || aws.ToString(out.CORSRules[1].ID) != "any" {
		t.Fatalf("get cors: %v %+v", err, out)
	}

	refusals := []struct {
		name string
		in   s3.PutBucketCorsInput
		code string
		msg  string
	}{
		{"allowed header not a token", s3.PutBucketCorsInput{CORSConfiguration: oneRule(types.CORSRule{
			AllowedHeaders: []string{"X-Amz-Date", "invalid header"}})}, "InvalidRequest", `AllowedHeader "invalid header" contains invalid character.`},
		{"expose header not a token", s3.PutBucketCorsInput{CORSConfiguration: oneRule(types.CORSRule{
			ExposeHeaders: []string{"X[Key]"}})}, "InvalidRequest", `AllowedHeader "X[Key]" contains invalid character.`},
		{"Content-MD5 not base64", s3.PutBucketCorsInput{CORSConfiguration: oneRule(types.CORSRule{}), ContentMD5: aws.String("invalid")},
			"InvalidDigest", "The Content-Md5 you specified is not valid."},
		{"Content-MD5 of other bytes", s3.PutBucketCorsInput{CORSConfiguration: oneRule(types.CORSRule{}), ContentMD5: aws.String("uU0nuZNNPgilLlLX2n2r+s==")},
			"BadDigest", "The Content-MD5 you specified did not match what we received."},
	}
	for _, tc := range refusals {
		tc.in.Bucket = aws.String("cors-on")
		_, err := ac.PutBucketCors(ctx, &tc.in)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code || ae.ErrorMessage() != tc.msg {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.msg)
		}
	}
	// None of the refusals replaced the rules.
	if out, err := ac.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("cors-on")}); err != nil || len(out.CORSRules) != 2 {
		t.Fatalf("rules after refusals: %v %+v", err, out)
	}

	hc := &http.Client{Timeout: 30 * time.Second}
	const notAllowed = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
	preflights := []struct {
		name, path, origin, method, headers string
		status                              int
		want                                corsError
	}{
		{"no bucket", "/no-such-bucket/object", "http://localhost:7070", "POST", "X-Amz-Date", 403,
			corsError{"AccessForbidden", "CORSResponse: Bucket not found", "POST", "BUCKET"}},
		{"no configuration", "/cors-off/object", "http://example.com", "POST", "X-Amz-Date,Date", 403,
			corsError{"AccessForbidden", "CORSResponse: CORS is not enabled for this bucket.", "POST", "BUCKET"}},
		{"no rule", "/cors-on/object", "http://origin.com", "DELETE", "", 403,
			corsError{"AccessForbidden", notAllowed, "DELETE", "OBJECT"}},
		{"header not allowed", "/cors-on", "http://origin.com", "PUT", "X-Amz-Date,Authorization", 403,
			corsError{"AccessForbidden", notAllowed, "PUT", "BUCKET"}},
		{"header not a token", "/cors-off/object", "www.my-origin.com", "GET", "Content-Encoding, Bad/Header", 400,
			corsError{"BadRequest", `Access-Control-Request-Headers " Bad/Header" contains invalid character.`, "", ""}},
		{"unknown method", "/cors-on/object", "www.my-origin.com", "Get", "", 400,
			corsError{"BadRequest", "Invalid Access-Control-Request-Method: Get", "", ""}},
		{"no origin", "/cors-on/object", "", "GET", "", 400,
			corsError{"BadRequest", "Insufficient information. Origin request header needed.", "", ""}},
	}
	for _, tc := range preflights {
		resp := corsDo(t, hc, http.MethodOptions, base+tc.path, tc.origin, tc.method, tc.headers)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got corsError
		if err := xml.Unmarshal(body, &got); err != nil || resp.StatusCode != tc.status || got != tc.want {
			t.Errorf("%s: %d %+v (%v), want %d %+v", tc.name, resp.StatusCode, got, err, tc.status, tc.want)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: refusal carries Access-Control-Allow-Origin", tc.name)
		}
	}

	// A granted preflight and an actual request answer the same headers:
	// only the exposed headers configured, no credentials with "*".
	mustPut(t, c, "cors-on", "object", []byte("x"), minio.PutObjectOptions{})
	vary := "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"
	for _, m := range []string{http.MethodOptions, http.MethodGet} {
		resp := corsDo(t, hc, m, base+"/cors-on/object", "http://origin.com", "PUT", "x-amz-date")
		resp.Body.Close()
		h := resp.Header
		if m == http.MethodGet && resp.StatusCode != http.StatusForbidden {
			// The GET is unsigned: S3 refuses it, with the CORS headers.
			t.Errorf("unsigned GET: %d", resp.StatusCode)
		}
		if h.Get("Access-Control-Allow-Origin") != "http://origin.com" || h.Get("Access-Control-Allow-Credentials") != "true" ||
			h.Get("Access-Control-Allow-Methods") != "POST, PUT" || h.Get("Access-Control-Allow-Headers") != "x-amz-date" ||
			h.Get("Access-Control-Expose-Headers") != "Authorization" || h.Get("Access-Control-Max-Age") != "-100" || h.Get("Vary") != vary {
			t.Errorf("%s granted: %d %v", m, resp.StatusCode, h)
		}
	}
	resp := corsDo(t, hc, http.MethodOptions, base+"/cors-on/object", "https://any.example", "HEAD", "content-type")
	resp.Body.Close()
	if h := resp.Header; resp.StatusCode != 200 || h.Get("Access-Control-Allow-Origin") != "*" ||
		h.Values("Access-Control-Allow-Credentials") != nil || h.Values("Access-Control-Expose-Headers") != nil ||
		h.Get("Access-Control-Allow-Methods") != "GET, HEAD" || h.Get("Access-Control-Max-Age") != "3000" {
		t.Errorf("star rule preflight: %d %v", resp.StatusCode, h)
	}
}

// oneRule is a configuration of one rule, with an origin and a method
// when r names none.
func oneRule(r types.CORSRule) *types.CORSConfiguration {
	if r.AllowedOrigins == nil {
		r.AllowedOrigins = []string{"http://origin.com"}
	}
	if r.AllowedMethods == nil {
		r.AllowedMethods = []string{"POST"}
	}
	return &types.CORSConfiguration{CORSRules: []types.CORSRule{r}}
}

// corsDo sends an unsigned request with the given CORS headers; empty
// values leave a header out.
func corsDo(t *testing.T, hc *http.Client, method, url, origin, reqMethod, reqHeaders string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Origin": origin, "Access-Control-Request-Method": reqMethod,
		"Access-Control-Request-Headers": reqHeaders} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
