package peer

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Authentication headers.
const (
	HeaderTime  = "X-Tessera-Time"
	HeaderNonce = "X-Tessera-Nonce"
	HeaderMAC   = "X-Tessera-Mac"
)

// MaxSkew is how far a request's timestamp may be from the server's clock.
const MaxSkew = 60 * time.Second

const (
	nonceHexLen = 32 // 16 random bytes
	macHexLen   = 64 // HMAC-SHA256
	keyContext  = "tessera peer api v1"
)

// Errors of authentication; the server answers each with 401, except
// ErrBusy (503).
var (
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBusy reports a full replay cache: the server refuses new nonces
	// rather than forget ones still inside the window.
	ErrBusy = errors.New("peer busy")
)

// deriveKey turns the cluster secret into the MAC key. An empty secret
// yields no key, and a nil key signs and verifies nothing (fail closed).
func deriveKey(secret []byte) []byte {
	if len(secret) == 0 {
		return nil
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyContext))
	return m.Sum(nil)
}

func computeMAC(key []byte, method, path, rawQuery, ts, nonce string) []byte {
	m := hmac.New(sha256.New, key)
	for i, part := range []string{method, path, rawQuery, ts, nonce} {
		if i > 0 {
			m.Write([]byte{'\n'})
		}
		m.Write([]byte(part))
	}
	return m.Sum(nil)
}

// sign adds the authentication headers to req, which must not change
// method, path or query afterwards.
func sign(req *http.Request, key []byte, now time.Time) error {
	if key == nil {
		return fmt.Errorf("sign request: no cluster secret: %w", ErrUnauthorized)
	}
	var raw [nonceHexLen / 2]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	nonce := hex.EncodeToString(raw[:])
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := computeMAC(key, req.Method, req.URL.EscapedPath(), req.URL.RawQuery, ts, nonce)
	req.Header.Set(HeaderTime, ts)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderMAC, hex.EncodeToString(mac))
	return nil
}

// authHeaders are the parsed authentication headers of a request.
type authHeaders struct {
	ts    int64
	tsRaw string
	nonce string
	mac   []byte
}

// parseAuth reads the authentication headers strictly: each exactly once,
// the timestamp as plain decimal digits, nonce and MAC as lowercase hex of
// the exact length. Anything else is rejected before any MAC work.
func parseAuth(h http.Header) (authHeaders, error) {
	var a authHeaders
	ts, err := single(h, HeaderTime)
	if err != nil {
		return a, err
	}
	if len(ts) == 0 || len(ts) > 18 || !allIn(ts, "0123456789") {
		return a, fmt.Errorf("%w: bad %s", ErrUnauthorized, HeaderTime)
	}
	if a.ts, err = strconv.ParseInt(ts, 10, 64); err != nil {
		return a, fmt.Errorf("%w: bad %s", ErrUnauthorized, HeaderTime)
	}
	a.tsRaw = ts
	if a.nonce, err = single(h, HeaderNonce); err != nil {
		return a, err
	}
	if len(a.nonce) != nonceHexLen || !allIn(a.nonce, "0123456789abcdef") {
		return a, fmt.Errorf("%w: bad %s", ErrUnauthorized, HeaderNonce)
	}
	mac, err := single(h, HeaderMAC)
	if err != nil {
		return a, err
	}
	if len(mac) != macHexLen || !allIn(mac, "0123456789abcdef") {
		return a, fmt.Errorf("%w: bad %s", ErrUnauthorized, HeaderMAC)
	}
	a.mac, _ = hex.DecodeString(mac)
	return a, nil
}

func single(h http.Header, name string) (string, error) {
	v := h.Values(name)
	if len(v) != 1 {
		return "", fmt.Errorf("%w: want one %s header, got %d", ErrUnauthorized, name, len(v))
	}
	return v[0], nil
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		ok := false
		for j := 0; j < len(set); j++ {
			if s[i] == set[j] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// verifier checks request authentication and remembers nonces.
type verifier struct {
	key    []byte
	now    func() time.Time
	nonces *nonceCache
}

// verify authenticates r. The nonce is recorded only once the MAC is
// good, so unauthenticated traffic cannot fill the replay cache.
func (v *verifier) verify(r *http.Request) error {
	if v.key == nil {
		return fmt.Errorf("%w: server has no cluster secret", ErrUnauthorized)
	}
	a, err := parseAuth(r.Header)
	if err != nil {
		return err
	}
	now := v.now()
	if d := now.Unix() - a.ts; d > int64(MaxSkew/time.Second) || d < -int64(MaxSkew/time.Second) {
		return fmt.Errorf("%w: timestamp %d is %ds from server time", ErrUnauthorized, a.ts, d)
	}
	want := computeMAC(v.key, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, a.tsRaw, a.nonce)
	if !hmac.Equal(want, a.mac) {
		return fmt.Errorf("%w: bad MAC", ErrUnauthorized)
	}
	return v.nonces.add(a.nonce, now)
}
