package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestEndpointURL(t *testing.T) {
	cases := []struct {
		scheme, addr, want string
	}{
		{"http", "[::]:9000", "http://127.0.0.1:9000"},
		{"http", "0.0.0.0:9000", "http://127.0.0.1:9000"},
		{"http", ":9000", "http://127.0.0.1:9000"},
		{"https", "[::]:9443", "https://127.0.0.1:9443"},
		{"http", "127.0.0.1:41234", "http://127.0.0.1:41234"},
		{"http", "192.0.2.7:9000", "http://192.0.2.7:9000"},
		{"http", "[::1]:9000", "http://[::1]:9000"},
		{"http", "[2001:db8::5]:9000", "http://[2001:db8::5]:9000"},
		{"http", "s3.example.test:9000", "http://s3.example.test:9000"},
	}
	for _, tc := range cases {
		if got := endpointURL(tc.scheme, tc.addr); got != tc.want {
			t.Errorf("endpointURL(%q, %q) = %q, want %q", tc.scheme, tc.addr, got, tc.want)
		}
	}
}

// TestHeldWriter: nothing passes before release, everything in order
// after it, and a start that logs past maxHeld is let through early.
func TestHeldWriter(t *testing.T) {
	var out bytes.Buffer
	h := newHeldWriter(&out)
	h.Write([]byte("one\n"))
	h.Write([]byte("two\n"))
	if out.Len() != 0 {
		t.Fatalf("wrote %q before release", out.String())
	}
	out.WriteString("banner\n")
	h.release()
	h.Write([]byte("three\n"))
	h.release()
	if got := out.String(); got != "banner\none\ntwo\nthree\n" {
		t.Fatalf("got %q", got)
	}

	out.Reset()
	h = newHeldWriter(&out)
	big := strings.Repeat("x", maxHeld/2) + "\n"
	h.Write([]byte(big))
	h.Write([]byte(big))
	h.Write([]byte(big))
	if out.Len() < maxHeld {
		t.Fatalf("held %d bytes past the %d bound", 3*len(big)-out.Len(), maxHeld)
	}
}
