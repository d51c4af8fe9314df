package peer

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// ServerName is the name every node's certificate carries and every
// client checks: nodes are found by address, and the cluster CA vouches
// for membership, not for a host name.
const ServerName = "tessera-cluster"

// caContext separates the CA key from every other key derived from the
// cluster secret (the request MAC key among them).
const caContext = "tessera cluster CA v1"

// TLS holds the TLS configurations of one node of the cluster. Every byte
// between nodes goes over TLS 1.3 with mutual authentication: the cluster
// CA's key is derived from the cluster secret (HKDF-SHA256), so every node
// that holds the secret can issue itself a certificate at start and check
// its counterpart's, and nothing else needs distributing. A captured
// connection can then neither be read, nor replayed (the handshake is
// fresh each time), nor have its body altered (every record is
// authenticated).
type TLS struct {
	Server, Client *tls.Config
}

// NewTLS derives the cluster CA from secret and issues this node a fresh
// certificate under it.
func NewTLS(secret []byte) (*TLS, error) {
	if len(secret) == 0 {
		return nil, errors.New("peer tls: empty cluster secret")
	}
	caKey, ca, err := clusterCA(secret)
	if err != nil {
		return nil, err
	}
	leaf, err := issue(caKey, ca)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &TLS{
		Server: &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool},
		Client: &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
			RootCAs: pool, ServerName: ServerName},
	}, nil
}

// clusterCA is the CA every node derives alike from the secret: the same
// key, name and key identifier, so a certificate one node issues verifies
// against the CA certificate another built.
func clusterCA(secret []byte) (ed25519.PrivateKey, *x509.Certificate, error) {
	seed, err := hkdf.Key(sha256.New, secret, nil, caContext, ed25519.SeedSize)
	if err != nil {
		return nil, nil, fmt.Errorf("peer tls: derive CA key: %w", err)
	}
	key := ed25519.NewKeyFromSeed(seed)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tessera cluster CA"},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("peer tls: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("peer tls: CA certificate: %w", err)
	}
	return key, ca, nil
}

// issue makes a fresh key pair for this node and certifies it under ca,
// for both ends of a connection.
func issue(caKey ed25519.PrivateKey, ca *x509.Certificate) (tls.Certificate, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("peer tls: node key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("peer tls: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: ServerName},
		DNSNames:     []string{ServerName},
		NotBefore:    now.Add(-time.Hour), // clocks of the cluster differ a little
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("peer tls: node certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
