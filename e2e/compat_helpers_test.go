package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"

	"tessera/server"
)

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and
// localhost (and *.localhost) into dir and returns the file names and a
// pool trusting it.
func selfSigned(t testing.TB, dir, cn string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "*.localhost"},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// tlsServer starts a server serving S3 over https with a fresh certificate.
func tlsServer(t *testing.T, mutate ...func(*server.EmbeddedConfig)) (*cluster, *x509.CertPool) {
	t.Helper()
	certFile, keyFile, pool := selfSigned(t, t.TempDir(), "tessera-test")
	c := startServer(t, append([]func(*server.EmbeddedConfig){func(cfg *server.EmbeddedConfig) {
		cfg.TLSCert, cfg.TLSKey = certFile, keyFile
	}}, mutate...)...)
	return c, pool
}

// loopbackTransport trusts pool (nil: plain http) and dials every host
// name to the server, so virtual-hosted names need no DNS.
func loopbackTransport(t testing.TB, addr string, pool *x509.CertPool) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2: false,
	}
	if pool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// awsClient is aws-sdk-go-v2 at default settings against endpoint.
func awsClient(t *testing.T, c *cluster, endpoint string, pool *x509.CertPool, pathStyle bool) *s3.Client {
	t.Helper()
	if v, ok := os.LookupEnv("AWS_CA_BUNDLE"); ok {
		os.Unsetenv("AWS_CA_BUNDLE")
		t.Cleanup(func() { os.Setenv("AWS_CA_BUNDLE", v) })
	}
	cr := c.srv.Credentials()
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: pathStyle,
		Credentials:  credentials.NewStaticCredentialsProvider(cr.AccessKey, cr.SecretKey, ""),
		HTTPClient:   &http.Client{Transport: loopbackTransport(t, c.srv.S3Addr(), pool)},
	})
}

// minioClient is minio-go against the server, https when pool is set.
func minioClient(t *testing.T, c *cluster, host string, pool *x509.CertPool, lookup minio.BucketLookupType) *minio.Client {
	t.Helper()
	cr := c.srv.Credentials()
	mc, err := minio.New(host, &minio.Options{
		Creds: mcreds.NewStaticV4(cr.AccessKey, cr.SecretKey, ""), Secure: pool != nil, Region: "us-east-1",
		Transport: loopbackTransport(t, c.srv.S3Addr(), pool), BucketLookup: lookup,
	})
	if err != nil {
		t.Fatal(err)
	}
	return mc
}
