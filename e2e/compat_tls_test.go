package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"tessera/server"
)

// TestCompatTLSReload replaces the certificate files of a running server
// and checks that new connections get the new certificate.
func TestCompatTLSReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool1 := selfSigned(t, dir, "first")
	c := startServer(t, func(cfg *server.EmbeddedConfig) { cfg.TLSCert, cfg.TLSKey = certFile, keyFile })
	served := func(pool *x509.CertPool) (string, error) {
		conn, err := tls.Dial("tcp", c.srv.S3Addr(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	if cn, err := served(pool1); err != nil || cn != "first" {
		t.Fatalf("initial certificate: %q %v", cn, err)
	}
	newCert, newKey, pool2 := selfSigned(t, t.TempDir(), "second")
	for _, f := range [][2]string{{newCert, certFile}, {newKey, keyFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1]+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f[1]+".tmp", f[1]); err != nil {
			t.Fatal(err)
		}
	}
	// The reloader looks at the files at most once a second.
	deadline := time.Now().Add(20 * time.Second)
	for {
		cn, err := served(pool2)
		if err == nil && cn == "second" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("renewed certificate not served: %q %v", cn, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
