package gateway

import (
	"strings"
	"testing"
	"time"
)

func FuzzParsePolicy(f *testing.F) {
	f.Add(encodePolicy(`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["content-length-range",0,5]]}`))
	f.Add(encodePolicy(`{"expiration":"2030-01-01T00:00:00Z","conditions":[[1,2,3],{"a":1}]}`))
	f.Add("!!")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b64 string) {
		p, err := parsePolicy(b64, now)
		if err != nil {
			return
		}
		if p.minSize < 0 || p.maxSize < p.minSize {
			t.Fatalf("accepted size range %d-%d", p.minSize, p.maxSize)
		}
		_ = p.check(map[string]string{"key": "k", "policy": b64}, "b", "k")
	})
}

func FuzzBucketFromHost(f *testing.F) {
	for _, s := range []string{"b.s3.test", "s3.test:1", "[::1]:80", "", ".s3.test", "a..s3.test"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		b := bucketFromHost(host, []string{"s3.test"})
		if b != "" && !strings.Contains(strings.ToLower(host), b+".s3.test") {
			t.Fatalf("%q gave bucket %q", host, b)
		}
	})
}

func FuzzCopySourceRange(f *testing.F) {
	for _, s := range []string{"bytes=0-1", "bytes=5-", "bytes=-5", "bytes=9-99999999999999999999", ""} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			return
		}
		off, length, err := parseCopySourceRange(v, size)
		if err == nil && (off < 0 || length < 0 || off+length > size) {
			t.Fatalf("%q of %d: %d+%d", v, size, off, length)
		}
	})
}
