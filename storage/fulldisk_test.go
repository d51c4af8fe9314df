package storage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes in a temp dir until the test
// ends: a disk that really fills.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk is made with a small tmpfs, which needs root to mount")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestFullDiskKeepsIndex: on a disk filled by something else, small
// (inlined) objects, whose only write is the index's, are refused with
// ErrDiskFull before the index is written; tombstones are still taken;
// and once space returns the store takes writes again. Without the
// refusal the index's WAL runs out of space and the store fails for good
// (ErrIndexFailed), however much space comes back.
func TestFullDiskKeepsIndex(t *testing.T) {
	mnt := mountTmpfs(t, 32<<20)
	s := openAt(t, filepath.Join(mnt, "store"))
	t.Cleanup(func() { s.Close() })
	mustMakeBucket(t, s, "bkt")
	if err := s.Commit(ctx, inlined("bkt", "before", stamp(1, "w"), []byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)
	data := make([]byte, 4<<10)
	refused := 0
	for i := range 3000 { // far more than the WAL's preallocated room
		err := s.Commit(ctx, inlined("bkt", fmt.Sprint("k", i), stamp(int64(10+i), "w"), data), nil)
		switch {
		case errors.Is(err, ErrIndexFailed):
			t.Fatalf("commit %d on a full disk failed the store: %v", i, err)
		case errors.Is(err, ErrDiskFull):
			refused++
		case err != nil:
			t.Fatalf("commit %d on a full disk: %v, want ErrDiskFull", i, err)
		}
	}
	if refused == 0 {
		t.Fatal("no commit refused on a full disk")
	}
	if err := s.Commit(ctx, object("bkt", "before", stamp(5000, "w")), nil); err != nil {
		t.Fatalf("tombstone on a full disk: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, inlined("bkt", "after", stamp(6000, "w"), []byte("y")), nil); err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
	if o, err := s.ReadMeta(ctx, "bkt", "after"); err != nil || string(o.Inline) != "y" {
		t.Fatalf("read back: %v", err)
	}
}

// fillDisk writes path until the filesystem refuses (ENOSPC).
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 256<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			return
		}
	}
}

// TestFailedStoreSaysSo: tombstones go on into a full disk's reserve
// until the index's WAL itself runs out of space; the store has then
// failed, which Failed reports (a peer's readiness shows it), wrapping
// ErrDiskFull as the cause.
func TestFailedStoreSaysSo(t *testing.T) {
	mnt := mountTmpfs(t, 32<<20)
	s := openAt(t, filepath.Join(mnt, "store"))
	t.Cleanup(func() { s.Close() })
	mustMakeBucket(t, s, "bkt")
	if err := s.Failed(); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	fillDisk(t, filepath.Join(mnt, "filler"))
	var err error
	for i := 0; i < 200000 && err == nil; i++ {
		err = s.Commit(ctx, object("bkt", fmt.Sprint("gone/", i), stamp(int64(10+i), "w")), nil)
	}
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("tombstones on a full disk ended with %v, want ErrDiskFull", err)
	}
	if err := s.Failed(); !errors.Is(err, ErrIndexFailed) || !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Failed() = %v, want ErrIndexFailed caused by ErrDiskFull", err)
	}
}
