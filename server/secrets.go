package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Credentials are the S3 access key pair and the cluster secret.
type Credentials struct {
	AccessKey     string `json:"access_key"`
	SecretKey     string `json:"secret_key"`
	ClusterSecret string `json:"cluster_secret"`
}

const secretsFile = "tessera.secrets"

// LoadOrCreateCredentials fills the blanks in c from dir's secrets file,
// creating the file (0600) with fresh random values on first start. It
// reports whether anything was generated, so the caller can print it once.
func LoadOrCreateCredentials(dir string, c Credentials) (Credentials, bool, error) {
	path := filepath.Join(dir, secretsFile)
	var stored Credentials
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &stored); err != nil {
			return c, false, fmt.Errorf("read %s: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return c, false, fmt.Errorf("read %s: %w", path, err)
	}
	generated := false
	fill := func(dst *string, have string, gen func() string) {
		switch {
		case *dst != "":
		case have != "":
			*dst = have
		default:
			*dst, generated = gen(), true
		}
	}
	fill(&c.AccessKey, stored.AccessKey, func() string { return randomString(10, true) })
	fill(&c.SecretKey, stored.SecretKey, func() string { return randomString(30, false) })
	fill(&c.ClusterSecret, stored.ClusterSecret, func() string { return randomString(32, false) })
	if !generated {
		return c, false, nil
	}
	if err := writeSecrets(path, c); err != nil {
		return c, false, err
	}
	return c, true, nil
}

func writeSecrets(path string, c Credentials) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("commit %s: %w", path, err)
	}
	return nil
}

// randomString returns n characters: an upper-case hex-like access key
// alphabet, or URL-safe base64 for secrets.
func randomString(n int, upper bool) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the kernel's CSPRNG never fails on Linux
	}
	if upper {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		return string(b)
	}
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// randomID returns a random hex identifier.
func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
