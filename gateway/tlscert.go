package gateway

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// CertReloader serves a certificate and key from files and reloads them
// when either file's modification time or size changes, so a renewed
// certificate takes effect without a restart. The check runs on handshakes
// at most once per checkEvery; a failed reload keeps the last good pair.
type CertReloader struct {
	certFile, keyFile string
	checkEvery        time.Duration

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string
	checked time.Time
}

// NewCertReloader loads the pair once and fails if it is unusable.
func NewCertReloader(certFile, keyFile string) (*CertReloader, error) {
	c := &CertReloader{certFile: certFile, keyFile: keyFile, checkEvery: time.Second}
	if err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// TLSConfig returns a server configuration using the reloader.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}

// GetCertificate implements tls.Config.GetCertificate.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checked) >= c.checkEvery {
		c.checked = time.Now()
		if s, err := c.fileStamp(); err == nil && s != c.stamp {
			// Keep serving the old pair when the new one does not load: a
			// half-written renewal must not take the endpoint down.
			_ = c.reloadLocked()
		}
	}
	return c.cert, nil
}

func (c *CertReloader) fileStamp() (string, error) {
	var s string
	for _, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%d;", fi.ModTime().UnixNano(), fi.Size())
	}
	return s, nil
}

func (c *CertReloader) reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reloadLocked()
}

func (c *CertReloader) reloadLocked() error {
	stamp, err := c.fileStamp()
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: load %s, %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.stamp = &cert, stamp
	return nil
}
