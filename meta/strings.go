package meta

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Strings maps header names to values kept byte-exact. S3 stores a
// header's bytes as sent, and clients send Latin-1 as well as UTF-8, but
// JSON strings are UTF-8: encoding/json would replace every invalid byte
// with U+FFFD. A value that is not valid UTF-8 is therefore written as a
// NUL followed by its base64; no header value can begin with a NUL, which
// HTTP forbids in field values.
type Strings map[string]string

const rawMark = "\x00"

// MarshalJSON implements json.Marshaler.
func (s Strings) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	out := make(map[string]string, len(s))
	for k, v := range s {
		if !utf8.ValidString(v) || strings.HasPrefix(v, rawMark) {
			v = rawMark + base64.StdEncoding.EncodeToString([]byte(v))
		}
		out[k] = v
	}
	return json.Marshal(out)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range m {
		if enc, ok := strings.CutPrefix(v, rawMark); ok {
			raw, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return err
			}
			m[k] = string(raw)
		}
	}
	*s = m
	return nil
}
