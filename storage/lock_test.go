package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLockDir: a held directory is refused (flock conflicts between two
// open descriptions even within one process, as between two processes),
// the refusal creates nothing, and the lock is free again after Unlock.
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := LockDir(dir)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node.id"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	for range 2 {
		if l, err := LockDir(dir); !errors.Is(err, ErrLocked) {
			l.Unlock()
			t.Fatalf("second lock of a held dir: %v, want ErrLocked", err)
		}
	}
	if after := listDir(t, dir); len(after) != len(before) || after[0] != before[0] {
		t.Fatalf("refused lock changed the dir: %v, then %v", before, after)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatalf("second unlock: %v", err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	if err := again.Unlock(); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
