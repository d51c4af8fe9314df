package gateway

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseObjectSize(f *testing.F) {
	for _, s := range []string{"0", "24117248", "-1", "4k", "", "+5", "9223372036854775808", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := parseObjectSize(http.Header{"X-Amz-Mp-Object-Size": {v}})
		if err != nil {
			return
		}
		if want, perr := strconv.ParseInt(v, 10, 64); n == nil || *n < 0 || perr != nil || *n != want {
			t.Fatalf("%q accepted as %v", v, n)
		}
	})
}

func FuzzParseWriteConditions(f *testing.F) {
	for _, s := range [][2]string{{"", "*"}, {`"abc"`, ""}, {"abc", "*"}, {"", `W/"x"`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, ifMatch, ifNoneMatch string) {
		h := http.Header{}
		if ifMatch != "" {
			h.Set("If-Match", ifMatch)
		}
		if ifNoneMatch != "" {
			h.Set("If-None-Match", ifNoneMatch)
		}
		m, n, err := parseWriteConditions(h)
		if err != nil {
			return
		}
		if m != "" && n != "" || n != "" && n != "*" {
			t.Fatalf("%q/%q accepted as %q/%q", ifMatch, ifNoneMatch, m, n)
		}
	})
}

func FuzzDotSegmentKey(f *testing.F) {
	for _, s := range []string{".", "..", "a/../b", "for/../../bar/", "//", "a//b", "./x", "/a/../../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		// A key kept must still name something inside the bucket once its
		// dot segments are resolved.
		if !dotSegmentKey(key) {
			c := path.Clean(key)
			if c == "." || c == "/" || c == ".." || strings.HasPrefix(c, "../") {
				t.Fatalf("%q kept, resolves to %q", key, c)
			}
		}
	})
}
