package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tessera/internal/fulldisk"
)

// TestFullDiskKeepsIndex: on a disk filled by something else, small
// (inlined) objects, whose only write is the index's, are refused with
// ErrDiskFull before the index is written; tombstones are still taken;
// and once space returns the store takes writes again. Without the
// refusal the index's WAL runs out of space and the store fails for good
// (ErrIndexFailed), however much space comes back.
func TestFullDiskKeepsIndex(t *testing.T) {
	mnt := fulldisk.Mount(t, 32<<20)
	s := openAt(t, filepath.Join(mnt, "store"))
	t.Cleanup(func() { s.Close() })
	mustMakeBucket(t, s, "bkt")
	if err := s.Commit(ctx, inlined("bkt", "before", stamp(1, "w"), []byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	fulldisk.Fill(t, filler)
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

// TestFailedStoreSaysSo: tombstones go on into a full disk's reserve
// until the index's WAL itself runs out of space; the store has then
// failed, which Failed reports (a peer's readiness shows it), wrapping
// ErrDiskFull as the cause.
func TestFailedStoreSaysSo(t *testing.T) {
	mnt := fulldisk.Mount(t, 32<<20)
	s := openAt(t, filepath.Join(mnt, "store"))
	t.Cleanup(func() { s.Close() })
	mustMakeBucket(t, s, "bkt")
	if err := s.Failed(); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	fulldisk.Fill(t, filepath.Join(mnt, "filler"))
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
