package server

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSpeedFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    float64
	}{
		{"1000\n", 125e6},
		{"25000", 3.125e9},
		{"-1\n", 0},
		{"", 0},
		{"fast", 0},
	} {
		p := filepath.Join(dir, "speed")
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := speedFile(p); got != tc.want {
			t.Errorf("speedFile(%q) = %g, want %g", tc.content, got, tc.want)
		}
	}
	if got := speedFile(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("missing file: %g", got)
	}
}

func TestLinkRate(t *testing.T) {
	for _, tc := range []struct {
		api     string
		sendCap float64
		want    float64
	}{
		{"127.0.0.1:9000", 0, 0},           // loopback has no speed
		{"127.0.0.1:9000", 12.5e6, 12.5e6}, // the send cap stands in
		{"not an address", 0, 0},
	} {
		if got := linkRate(tc.api, tc.sendCap); got != tc.want {
			t.Errorf("linkRate(%q, %g) = %g, want %g", tc.api, tc.sendCap, got, tc.want)
		}
	}
}
