package gateway

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// A continuation token is where the next page starts: the last key or
// common prefix of the page (the last bucket name for ListBuckets), the
// form other S3-compatible servers such as versitygw send. S3 calls its
// tokens opaque, so clients only ever pass them back; any form is
// compatible. A page starts after its token, so a token that was made up
// rather than issued is simply a start point: any string could be a key,
// and such tokens are not detected.
//
// A position XML cannot carry (control characters, invalid UTF-8) would
// reach the client changed and continue the listing from the wrong place,
// so it is sent as tokenEscape and its base64url instead; so is a
// position that itself starts with tokenEscape, which keeps every token
// unambiguous.
const tokenEscape = "~~"

// maxTokenLen bounds what decodeToken reads: a position is at most a key
// (1024 bytes, 1370 escaped), and S3 documents 1024 characters for
// ListBuckets tokens.
const maxTokenLen = 2048

// encodeToken makes the continuation token for a position.
func encodeToken(position string) string {
	if xmlSafe(position) && !strings.HasPrefix(position, tokenEscape) {
		return position
	}
	return tokenEscape + base64.RawURLEncoding.EncodeToString([]byte(position))
}

// decodeToken returns the position a token names. An empty or overlong
// token is S3's InvalidArgument; an escaped one whose base64 does not
// decode was not issued here and is taken as it is.
func decodeToken(tok string) (string, error) {
	if len(tok) == 0 || len(tok) > maxTokenLen {
		return "", apiErr(errInvalidContinuationToken)
	}
	if rest, ok := strings.CutPrefix(tok, tokenEscape); ok {
		if b, err := base64.RawURLEncoding.DecodeString(rest); err == nil {
			return string(b), nil
		}
	}
	return tok, nil
}

// xmlSafe reports whether s survives an XML 1.0 document unchanged: valid
// UTF-8 of characters XML allows (Go's encoder turns the others into
// U+FFFD).
func xmlSafe(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false // invalid UTF-8 (U+FFFD itself stays as it is, but is rare enough to escape)
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20, r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF:
			return false
		}
	}
	return true
}
