package gateway

import (
	"errors"
	"testing"

	"tessera/object"
)

func TestParseRange(t *testing.T) {
	cases := []struct {
		h    string
		want byteRange
		ok   bool
	}{
		{"bytes=0-9", byteRange{first: 0, last: 9}, true},
		{"bytes=5-", byteRange{first: 5, last: -1}, true},
		{"bytes=-3", byteRange{suffix: 3, isSuffix: true}, true},
		{"bytes=-0", byteRange{suffix: 0, isSuffix: true}, true},
		{"Bytes=1-1", byteRange{first: 1, last: 1}, true},
		{"bytes=00-01", byteRange{first: 0, last: 1}, true},
		{"bytes=100-200", byteRange{first: 100, last: 200}, true},
		// Ignored: the whole object is sent.
		{"", byteRange{}, false},
		{"bytes=", byteRange{}, false},
		{"bytes=-", byteRange{}, false},
		{"bytes=,", byteRange{}, false},
		{"bytes=5-3", byteRange{}, false},
		{"bytes=0-1,4-5", byteRange{}, false},
		{"bytes=0-0,1-2", byteRange{}, false},
		{"bytes=a-b", byteRange{}, false},
		{"bytes=abc", byteRange{}, false},
		{"bytes=abc-xyz", byteRange{}, false},
		{"bytes=1-x", byteRange{}, false},
		{"bytes=+1-2", byteRange{}, false},
		{"bytes=-+2", byteRange{}, false},
		{"bytes=--1", byteRange{}, false},
		{"bytes=0--1", byteRange{}, false},
		{"bytes=1", byteRange{}, false},
		{"items=0-1", byteRange{}, false},
		{"foo=0-1", byteRange{}, false},
		{"bytes=99999999999999999999-", byteRange{}, false},
		{"bytes 0-1", byteRange{}, false},
		// S3 reads no whitespace inside the range.
		{"bytes= -1", byteRange{}, false},
		{"bytes=0 -1", byteRange{}, false},
		{"bytes=0- 1", byteRange{}, false},
		{"bytes= 2 - 4 ", byteRange{}, false},
		{"bytes =0-1", byteRange{}, false},
	}
	for _, c := range cases {
		got, ok := parseRange(c.h)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseRange(%q) = %+v, %v; want %+v, %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

func TestResolveRange(t *testing.T) {
	cases := []struct {
		h           string
		size        int64
		off, length int64
		whole       bool
		invalid     bool
	}{
		{"bytes=0-9", 100, 0, 10, false, false},
		{"bytes=0-0", 100, 0, 1, false, false},
		{"bytes=99-", 100, 99, 1, false, false},
		{"bytes=50-1000", 100, 50, 50, false, false},
		{"bytes=-10", 100, 90, 10, false, false},
		{"bytes=-1000", 100, 0, 100, false, false},
		{"bytes=0-", 1, 0, 1, false, false},
		{"bytes=100-", 100, 0, 0, false, true},
		{"bytes=100-200", 100, 0, 0, false, true},
		{"bytes=-0", 100, 0, 0, false, true},
		// A 0-byte object: a suffix range is the whole (empty) object,
		// any other range is unsatisfiable.
		{"bytes=-1", 0, 0, 0, true, false},
		{"bytes=-5", 0, 0, 0, true, false},
		{"bytes=-0", 0, 0, 0, false, true},
		{"bytes=0-", 0, 0, 0, false, true},
		{"bytes=0-0", 0, 0, 0, false, true},
		{"bytes=00-01", 0, 0, 0, false, true},
	}
	for _, c := range cases {
		br, ok := parseRange(c.h)
		if !ok {
			t.Fatalf("parseRange(%q) rejected", c.h)
		}
		off, n, whole, err := br.resolve(c.size)
		if c.invalid {
			if !errors.Is(err, object.ErrInvalidRange) {
				t.Errorf("%q on %d bytes: err %v, want ErrInvalidRange", c.h, c.size, err)
			}
			continue
		}
		if err != nil || off != c.off || n != c.length || whole != c.whole {
			t.Errorf("%q on %d bytes = %d,%d,%v,%v; want %d,%d,%v", c.h, c.size, off, n, whole, err, c.off, c.length, c.whole)
		}
	}
}

func FuzzRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=-5", "bytes=7-", "bytes=5-3", "bytes=0-1,2-3", "bytes=-0", "Bytes = 1 - 2", "bytes= -1", "bytes=0--1"} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -size
		}
		br, ok := parseRange(h)
		if !ok {
			return
		}
		off, n, whole, err := br.resolve(size)
		if err != nil {
			if !errors.Is(err, object.ErrInvalidRange) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if whole {
			if size != 0 || off != 0 || n != 0 {
				t.Fatalf("%q on %d bytes: whole object as span %d+%d", h, size, off, n)
			}
			return
		}
		if off < 0 || n <= 0 || off+n > size || off+n < off {
			t.Fatalf("%q on %d bytes: span %d+%d out of bounds", h, size, off, n)
		}
	})
}
