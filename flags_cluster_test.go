package main

import "testing"

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"500", 500, true}, {"64KiB", 64 << 10, true}, {"10GiB", 10 << 30, true}, {"2TB", 2e12, true},
		{"1.5G", 3 << 29, true}, {" 3 MiB ", 3 << 20, true}, {"7b", 7, true},
		{"", 0, false}, {"-1GiB", 0, false}, {"GiB", 0, false}, {"1XB", 0, false}, {"NaN", 0, false},
		{"99999999999PiB", 0, false},
	}
	for _, tc := range cases {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
