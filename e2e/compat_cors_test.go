package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"
)

// TestCompatCORS sets a bucket's CORS rules with minio-go and
// aws-sdk-go-v2, then plays a browser: unauthenticated OPTIONS preflights
// and a cross-origin GET through a presigned URL.
func TestCompatCORS(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mc := c.mc
	if err := mc.MakeBucket(ctx, "web", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "web", "index.html", []byte("<p>hi</p>"), minio.PutObjectOptions{ContentType: "text/html"})

	// minio-go: unset → nil, set, read back.
	if got, err := mc.GetBucketCors(ctx, "web"); err != nil || got != nil {
		t.Fatalf("get unset cors: %v %+v", err, got)
	}
	cfg := cors.NewConfig([]cors.Rule{{
		ID: "app", AllowedOrigin: []string{"https://app.example.com", "https://*.preview.example.com"},
		AllowedMethod: []string{"GET", "PUT"}, AllowedHeader: []string{"*"},
		ExposeHeader: []string{"ETag"}, MaxAgeSeconds: 300,
	}})
	if err := mc.SetBucketCors(ctx, "web", cfg); err != nil {
		t.Fatalf("set cors: %v", err)
	}
	got, err := mc.GetBucketCors(ctx, "web")
	if err != nil || got == nil || len(got.CORSRules) != 1 || got.CORSRules[0].ID != "app" ||
		got.CORSRules[0].MaxAgeSeconds != 300 || len(got.CORSRules[0].AllowedOrigin) != 2 {
		t.Fatalf("get cors: %v %+v", err, got)
	}
	bad := cors.NewConfig([]cors.Rule{{AllowedOrigin: []string{"*"}, AllowedMethod: []string{"PATCH"}}})
	if err := mc.SetBucketCors(ctx, "web", bad); errCode(err) != "InvalidRequest" {
		t.Fatalf("set invalid cors: %v", err)
	}

	base := "http://" + c.srv.S3Addr()
	hc := &http.Client{Timeout: 30 * time.Second}
	preflight := func(path, origin, method, headers string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, base+path, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	cases := []struct {
		path, origin, method, headers string
		status                        int
		allow                         string
	}{
		{"/web/index.html", "https://app.example.com", "PUT", "content-type,x-amz-date", 200, "https://app.example.com"},
		{"/web/index.html", "https://pr-7.preview.example.com", "GET", "", 200, "https://pr-7.preview.example.com"},
		{"/web/index.html", "https://evil.example.net", "GET", "", 403, ""},
		{"/web/index.html", "https://app.example.com", "DELETE", "", 403, ""},
	}
	for _, tc := range cases {
		resp := preflight(tc.path, tc.origin, tc.method, tc.headers)
		if resp.StatusCode != tc.status || resp.Header.Get("Access-Control-Allow-Origin") != tc.allow {
			t.Fatalf("preflight %+v: %d %v", tc, resp.StatusCode, resp.Header)
		}
		if tc.status == 200 && (resp.Header.Get("Access-Control-Max-Age") != "300" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), tc.method)) {
			t.Fatalf("preflight %+v headers: %v", tc, resp.Header)
		}
	}

	// The cross-origin GET itself, signed in its URL as a browser page
	// would use it.
	u, err := mc.PresignedGetObject(ctx, "web", "index.html", time.Minute, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Header.Set("Origin", "https://app.example.com")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		resp.Header.Get("Access-Control-Expose-Headers") != "ETag" {
		t.Fatalf("cross-origin GET: %d %v", resp.StatusCode, resp.Header)
	}

	// aws-sdk-go-v2 replaces the rules, reads and deletes them.
	ac := awsClient(t, c, base, nil, true)
	_, err = ac.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("web"), CORSConfiguration: &types.CORSConfiguration{
		CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"HEAD", "GET"}}},
	}})
	if err != nil {
		t.Fatalf("aws put cors: %v", err)
	}
	out, err := ac.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")})
	if err != nil || len(out.CORSRules) != 1 || out.CORSRules[0].AllowedOrigins[0] != "*" {
		t.Fatalf("aws get cors: %v %+v", err, out)
	}
	if resp := preflight("/web/index.html", "https://app.example.com", "PUT", ""); resp.StatusCode != 403 {
		t.Fatalf("preflight after replace: %d", resp.StatusCode)
	}
	if resp := preflight("/web/index.html", "https://any.test", "GET", ""); resp.StatusCode != 200 ||
		resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight to star rule: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := ac.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("web")}); err != nil {
		t.Fatalf("aws delete cors: %v", err)
	}
	_, err = ac.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "NoSuchCORSConfiguration" {
		t.Fatalf("aws get deleted cors: %v", err)
	}
	if resp := preflight("/web/index.html", "https://any.test", "GET", ""); resp.StatusCode != 403 {
		t.Fatalf("preflight after delete: %d", resp.StatusCode)
	}
}
