package peer

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func timeNow() time.Time { return time.Now() }

func walkFiles(t *testing.T, root string, fn func(string)) {
	t.Helper()
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			fn(filepath.ToSlash(p))
		}
		return nil
	})
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
