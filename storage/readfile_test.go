package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"tessera/meta"
)

// TestReadFile: a record file is read whole; anything but a regular file
// of plausible size is damage, and a missing file is not-exist.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int64, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if size > 0 {
			if err := os.Truncate(p, size); err != nil { // sparse: costs no disk
				t.Fatal(err)
			}
		}
		return p
	}
	small := bytes.Repeat([]byte("record "), 1000)
	cases := []struct {
		name    string
		path    string
		want    []byte
		corrupt bool
		missing bool
	}{
		{"regular", write("a", 0, small), small, false, false},
		{"empty", write("b", 0, nil), []byte{}, false, false},
		{"missing", filepath.Join(dir, "none"), nil, false, true},
		{"missing parent", filepath.Join(dir, "a", "meta"), nil, false, true},
		{"directory", dir, nil, true, false},
		{"too large", write("c", maxRecordLen+1, nil), nil, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readFile(tc.path)
			switch {
			case tc.missing:
				if !isNotExist(err) {
					t.Fatalf("err %v, want not-exist", err)
				}
			case tc.corrupt:
				if !errors.Is(err, meta.ErrCorrupt) {
					t.Fatalf("err %v, want corrupt", err)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(got, tc.want):
				t.Fatalf("read %d bytes, want %d", len(got), len(tc.want))
			}
		})
	}
}
