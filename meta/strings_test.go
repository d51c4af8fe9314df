package meta

import (
	"bytes"
	"testing"
)

// TestStringsByteExact: header values survive the record codec byte for
// byte, whatever their encoding.
func TestStringsByteExact(t *testing.T) {
	vals := Strings{
		"ascii":  "plain value",
		"utf8":   "café 日本",
		"latin1": "Hello World\xe9",
		"nul":    "\x00looks encoded",
		"empty":  "",
	}
	o := &Object{Bucket: "b", Key: "k", UserMeta: vals, Headers: Strings{"Content-Encoding": "gzip, caf\xe9"}}
	rec, err := Marshal(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rec, []byte("café 日本")) {
		t.Error("valid UTF-8 is not stored as plain JSON text")
	}
	var got Object
	if _, err := Unmarshal(rec, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if got.UserMeta[k] != v {
			t.Errorf("%s: %q, want %q", k, got.UserMeta[k], v)
		}
	}
	if got.Headers["Content-Encoding"] != "gzip, caf\xe9" {
		t.Errorf("header %q", got.Headers["Content-Encoding"])
	}
}
