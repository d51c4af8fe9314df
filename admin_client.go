package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7/pkg/signer"

	"tessera/gateway"
)

// emptySHA256 is the payload hash of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// plainToTLS is what a Go TLS server answers a plain HTTP request with.
const plainToTLS = "Client sent an HTTP request to an HTTPS server"

// adminClient signs admin API calls with the S3 credentials.
type adminClient struct {
	base, access, secret, region string
	// explicit: the endpoint named its scheme, so it is never switched.
	explicit bool
	hc       *http.Client
}

// newAdminClient reads the keys from the environment. An endpoint without
// a scheme is tried over http and moved to https if the gateway answers
// that it serves TLS; caFile adds a CA to trust for it.
func newAdminClient(endpoint, caFile string) (*adminClient, error) {
	c := &adminClient{base: strings.TrimRight(endpoint, "/"), access: os.Getenv("TESSERA_ACCESS_KEY"),
		secret: os.Getenv("TESSERA_SECRET_KEY"), region: envOr("TESSERA_REGION", "us-east-1"),
		explicit: strings.Contains(endpoint, "://"), hc: &http.Client{}}
	if !c.explicit {
		c.base = "http://" + c.base
	}
	if c.access == "" || c.secret == "" {
		return nil, errors.New("admin: TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY must be set")
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("admin: --ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("admin: --ca-file %s: no PEM certificate in it", caFile)
		}
		c.hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	return c, nil
}

// do calls the admin API at path with query q and decodes the JSON
// answer into out.
func (c *adminClient) do(ctx context.Context, method, path string, q url.Values, out any) error {
	body, err := c.call(ctx, method, path, q)
	if err != nil && !c.explicit && strings.Contains(err.Error(), plainToTLS) {
		c.base, c.explicit = "https://"+strings.TrimPrefix(c.base, "http://"), true
		body, err = c.call(ctx, method, path, q)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin: %s %s: decode: %w", method, path, err)
	}
	return nil
}

// call makes one signed request and returns the body of a 200 answer.
func (c *adminClient) call(ctx context.Context, method, path string, q url.Values) ([]byte, error) {
	u := c.base + gateway.AdminPrefix + path
	if len(q) > 0 {
		// SigV4 canonical queries escape a space as %20, not +.
		u += "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	req = signer.SignV4(*req, c.access, c.secret, "", c.region)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("admin: %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("admin: %s %s: %s", method, path, describeFailure(resp.Status, body))
	}
	return body, nil
}

// describeFailure turns an S3 error body into "Code: Message".
func describeFailure(status string, body []byte) string {
	var e struct{ Code, Message string }
	if xml.Unmarshal(body, &e) == nil && e.Code != "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return status + ": " + strings.TrimSpace(string(body[:min(len(body), 1024)]))
}
