package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tessera/server"
)

// The real clients of Signature Version 2 and of S3's region answer,
// against a real server: s3cmd (Debian) and boto3 (the python3 on PATH).
// Virtual-hosted requests go through the server itself as an HTTP proxy,
// so BUCKET.s3.local needs no DNS.

const sigv2Domain = "s3.local"

func startSigV2Server(t *testing.T) *cluster {
	t.Helper()
	return startServer(t, func(c *server.EmbeddedConfig) { c.Domains = []string{sigv2Domain} })
}

func needTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil && len(args) > 0 {
		err = exec.Command(p, args...).Run()
	}
	if err != nil {
		t.Skipf("%s not usable (%v); .ci/clients.sh installs the client packages", name, err)
	}
	return p
}

// s3cmdConfig writes an s3cmd configuration for the server; virtual
// selects BUCKET.s3.local through the server as proxy.
func s3cmdConfig(t *testing.T, c *cluster, location string, v2, virtual bool) string {
	t.Helper()
	addr := c.srv.S3Addr()
	host, bucketHost, proxy := addr, addr, ""
	if virtual {
		host, bucketHost = sigv2Domain, "%(bucket)s."+sigv2Domain
		h, p, _ := strings.Cut(addr, ":")
		proxy = fmt.Sprintf("proxy_host = %s\nproxy_port = %s\n", h, p)
	}
	cfg := fmt.Sprintf("[default]\naccess_key = %s\nsecret_key = %s\nhost_base = %s\nhost_bucket = %s\n"+
		"bucket_location = %s\nuse_https = False\nsignature_v2 = %v\n%s",
		c.srv.Credentials().AccessKey, c.srv.Credentials().SecretKey, host, bucketHost, location,
		map[bool]string{true: "True", false: "False"}[v2], proxy)
	path := filepath.Join(t.TempDir(), "s3cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs a client command with an isolated HOME and fails the test
// with its output when it fails.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + t.TempDir(), "AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func randomFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%v, %v)", a, b, err1, err2)
	}
}

// TestS3cmdSignatureV2 runs s3cmd --signature-v2 (x-amz-date in RFC 1123
// with +0000) over bucket, object, copy, multipart and presigned paths,
// in path and virtual-hosted style.
func TestS3cmdSignatureV2(t *testing.T) {
	s3cmd := needTool(t, "s3cmd", "--version")
	c := startSigV2Server(t)
	for _, virtual := range []bool{false, true} {
		t.Run(map[bool]string{false: "path", true: "virtual"}[virtual], func(t *testing.T) {
			cfg := s3cmdConfig(t, c, "us-east-1", false, virtual)
			s3 := func(args ...string) string {
				return run(t, nil, s3cmd, append([]string{"-c", cfg, "--signature-v2"}, args...)...)
			}
			dir := t.TempDir()
			b := fmt.Sprintf("s3://v2-%v", virtual)
			small := randomFile(t, dir, "small", 1000)
			big := randomFile(t, dir, "big", 12<<20)
			s3("mb", b)
			s3("put", small, b+"/dir/a+b c")
			if out := s3("ls", "-r", b); !strings.Contains(out, "dir/a+b c") {
				t.Fatalf("ls: %s", out)
			}
			s3("info", b+"/dir/a+b c")
			s3("get", "--force", b+"/dir/a+b c", filepath.Join(dir, "small.down"))
			sameFiles(t, small, filepath.Join(dir, "small.down"))
			s3("cp", b+"/dir/a+b c", b+"/copy")
			s3("put", "--multipart-chunk-size-mb=5", big, b+"/big")
			s3("get", "--force", b+"/big", filepath.Join(dir, "big.down"))
			sameFiles(t, big, filepath.Join(dir, "big.down"))
			s3("sync", dir+"/", b+"/tree/")
			link := strings.TrimSpace(s3("signurl", b+"/copy", "+300"))
			getURL(t, c, link, virtual, small)
			s3("del", "--recursive", "--force", b)
			s3("rb", b)
		})
	}
}

// getURL fetches a presigned URL (through the server as proxy for a
// virtual-hosted one) and compares the body with a file.
func getURL(t *testing.T, c *cluster, link string, virtual bool, want string) {
	t.Helper()
	tr := &http.Transport{}
	if virtual {
		tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: c.srv.S3Addr()})
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	data, _ := os.ReadFile(want)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("GET %s: %d %.300s", link, resp.StatusCode, got)
	}
}

// TestS3cmdRegionRedirect: s3cmd's default bucket_location "US" signs
// SigV4 for region "US"; the server's answer names us-east-1 in
// <Region>, s3cmd re-signs, and mb, put and ls succeed.
func TestS3cmdRegionRedirect(t *testing.T) {
	s3cmd := needTool(t, "s3cmd", "--version")
	c := startSigV2Server(t)
	for _, virtual := range []bool{false, true} {
		t.Run(map[bool]string{false: "path", true: "virtual"}[virtual], func(t *testing.T) {
			cfg := s3cmdConfig(t, c, "US", false, virtual)
			s3 := func(args ...string) string { return run(t, nil, s3cmd, append([]string{"-c", cfg}, args...)...) }
			dir := t.TempDir()
			b := fmt.Sprintf("s3://region-%v", virtual)
			small := randomFile(t, dir, "small", 100)
			s3("mb", b)
			s3("put", small, b+"/k")
			if out := s3("ls", b); !strings.Contains(out, b+"/k") {
				t.Fatalf("ls: %s", out)
			}
			if out := s3("ls"); !strings.Contains(out, b) {
				t.Fatalf("ls of buckets: %s", out)
			}
			s3("get", "--force", b+"/k", filepath.Join(dir, "k.down"))
			sameFiles(t, small, filepath.Join(dir, "k.down"))
		})
	}
}

// TestBoto3SignatureV2 runs e2e/clients/boto3_sigv2.py: boto3 with
// signature_version "s3" on every kind of request, in both styles.
func TestBoto3SignatureV2(t *testing.T) {
	python := needTool(t, "python3", "-c", "import boto3")
	c := startSigV2Server(t)
	for _, style := range []string{"path", "virtual"} {
		t.Run(style, func(t *testing.T) {
			out := run(t, []string{"ENDPOINT=http://" + c.srv.S3Addr(), "ADDRESSING=" + style, "DOMAIN=" + sigv2Domain,
				"AWS_ACCESS_KEY_ID=" + c.srv.Credentials().AccessKey, "AWS_SECRET_ACCESS_KEY=" + c.srv.Credentials().SecretKey},
				python, filepath.Join("clients", "boto3_sigv2.py"))
			if !strings.Contains(out, " 0 failed") {
				t.Fatalf("boto3 suite:\n%s", out)
			}
			t.Logf("\n%s", out)
		})
	}
}
