package gateway

import (
	"fmt"
	"strconv"
	"strings"

	"tessera/object"
)

// byteRange is one parsed "bytes=" range: first-last inclusive (last -1
// when open-ended), or the final suffix bytes when isSuffix.
type byteRange struct {
	first, last int64
	suffix      int64
	isSuffix    bool
}

// parseRange parses a Range header. ok is false when the header is to be
// ignored and the whole object sent, as S3 does: absent, not a byte range,
// syntactically invalid (including last < first), or several ranges.
// S3 allows no whitespace inside the range: "bytes= -1" and "bytes=0 -1"
// are ignored, not read as ranges. The unit compares case-insensitively
// (RFC 9110).
func parseRange(h string) (br byteRange, ok bool) {
	if len(h) < 6 || !strings.EqualFold(h[:6], "bytes=") {
		return byteRange{}, false
	}
	firstS, lastS, found := strings.Cut(h[6:], "-")
	if !found {
		return byteRange{}, false
	}
	if firstS == "" {
		n, ok := parseDigits(lastS)
		if !ok {
			return byteRange{}, false
		}
		return byteRange{suffix: n, isSuffix: true}, true
	}
	first, ok := parseDigits(firstS)
	if !ok {
		return byteRange{}, false
	}
	if lastS == "" {
		return byteRange{first: first, last: -1}, true
	}
	last, ok := parseDigits(lastS)
	if !ok || last < first {
		return byteRange{}, false
	}
	return byteRange{first: first, last: last}, true
}

// parseDigits accepts a non-empty run of ASCII digits that fits an int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// resolve maps the range onto an object of size bytes. whole is true
// when the range selects the entire object of an empty one, which S3
// answers with 200 and no Content-Range: a suffix range ("bytes=-5") of a
// 0-byte object. It fails with object.ErrInvalidRange when no byte can be
// selected: first at or past the end (so any "bytes=a-" or "bytes=a-b" of
// an empty object) or a zero-length suffix.
func (br byteRange) resolve(size int64) (off, length int64, whole bool, err error) {
	if br.isSuffix {
		switch {
		case br.suffix == 0:
			return 0, 0, false, object.ErrInvalidRange
		case size <= 0:
			return 0, 0, true, nil
		}
		n := min(br.suffix, size)
		return size - n, n, false, nil
	}
	if br.first >= size {
		return 0, 0, false, object.ErrInvalidRange
	}
	last := br.last
	if last < 0 || last >= size {
		last = size - 1
	}
	return br.first, last - br.first + 1, false, nil
}

// contentRange formats the Content-Range header of a 206 response.
func contentRange(off, length, size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", off, off+length-1, size)
}
