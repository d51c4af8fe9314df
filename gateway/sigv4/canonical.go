package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

const (
	algorithm      = "AWS4-HMAC-SHA256"
	algorithmECDSA = "AWS4-ECDSA-P256-SHA256" // SigV4a, not verified here
	service        = "s3"
	terminator     = "aws4_request"
	iso8601Format  = "20060102T150405Z"
	scopeDate      = "20060102"

	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// signingKey derives the SigV4 key for one day, region and service.
func signingKey(secret, date, region string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, terminator)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// stringToSign builds the SigV4 string to sign of a canonical request.
func stringToSign(amzDate, scope, canonical string) string {
	return algorithm + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex([]byte(canonical))
}

// canonicalRequest assembles the six lines S3 hashes; signedHeaders is the
// client's list verbatim, since that exact string is what it signed.
func canonicalRequest(r *http.Request, query []param, signedHeaders []string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(canonicalURI(r.URL))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(query))
	b.WriteByte('\n')
	writeCanonicalHeaders(&b, r, signedHeaders)
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// canonicalURI re-encodes each segment of the path from its decoded form.
// Working segment by segment on the escaped path keeps an encoded '/'
// (%2F) inside a key distinct from a real separator, and decoding first
// makes "%7E" and "~" canonicalise alike, as S3 does.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if d, err := url.PathUnescape(s); err == nil {
			s = d
		}
		segs[i] = uriEncode(s, true)
	}
	return strings.Join(segs, "/")
}

// uriEncode percent-encodes every byte outside RFC 3986's unreserved set,
// with upper-case hex, as SigV4 requires.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || (c == '/' && !encodeSlash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

// param is one decoded query parameter.
type param struct{ key, value string }

// parseQuery splits a raw query without dropping anything: url.ParseQuery
// discards pairs with bad escapes or semicolons, which would let a client
// smuggle unsigned parameters past the canonical query.
func parseQuery(raw string) []param {
	var ps []param
	for raw != "" {
		var piece string
		piece, raw, _ = strings.Cut(raw, "&")
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		ps = append(ps, param{queryUnescape(k), queryUnescape(v)})
	}
	return ps
}

func queryUnescape(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// canonicalQuery sorts by encoded name, then encoded value.
func canonicalQuery(ps []param) string {
	enc := make([]param, len(ps))
	for i, p := range ps {
		enc[i] = param{uriEncode(p.key, true), uriEncode(p.value, true)}
	}
	sort.Slice(enc, func(i, j int) bool {
		if enc[i].key != enc[j].key {
			return enc[i].key < enc[j].key
		}
		return enc[i].value < enc[j].value
	})
	var b strings.Builder
	for i, p := range enc {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.key)
		b.WriteByte('=')
		b.WriteString(p.value)
	}
	return b.String()
}

// writeCanonicalHeaders writes "name:value\n" for each signed header.
func writeCanonicalHeaders(b *strings.Builder, r *http.Request, names []string) {
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(':')
		for i, v := range headerValues(r, n) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(collapseSpaces(v))
		}
		b.WriteByte('\n')
	}
}

// headerValues returns a signed header's values, including those net/http
// moves out of the Header map (Host, and Content-Length or
// Transfer-Encoding on some paths).
func headerValues(r *http.Request, name string) []string {
	if name == "host" {
		h := r.Host
		if h == "" && r.URL != nil {
			h = r.URL.Host
		}
		return []string{h}
	}
	if vs := r.Header.Values(name); len(vs) > 0 {
		return vs
	}
	switch name {
	case "content-length":
		if r.ContentLength >= 0 {
			return []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		if len(r.TransferEncoding) > 0 {
			return []string{strings.Join(r.TransferEncoding, ",")}
		}
	}
	return nil
}

// collapseSpaces trims a value and folds runs of spaces into one.
func collapseSpaces(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	space := false
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
