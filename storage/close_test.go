package storage

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestCloseFlushesTheIndex: a clean Close leaves the records in tables,
// so the next Open has no log to replay and flush before it serves.
func TestCloseFlushesTheIndex(t *testing.T) {
	s := newStore(t)
	if err := s.Commit(ctx, inlined("bkt", "a", stamp(1, "w"), []byte("a")), nil); err != nil {
		t.Fatal(err)
	}
	if n := tables(t, s.Dir()); n != 0 {
		t.Fatalf("%d tables before the close: the test needs the record in the memtable", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := tables(t, s.Dir()); n == 0 {
		t.Fatal("no table after a clean close: the memtable was not flushed")
	}
	s = openAt(t, s.Dir())
	defer s.Close()
	if o, err := s.ReadMeta(ctx, "bkt", "a"); err != nil || string(o.Inline) != "a" {
		t.Fatalf("record after the reopen: %v", err)
	}
}

func tables(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "index", "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestCloseOnAHungDisk: a disk that hangs while the memtable is flushed
// must not hold Close (and the process's exit) for good. Close gives up
// after its bound with ErrCloseTimeout; once the disk answers again the
// index finishes closing on its own, and a reopen finds every write.
func TestCloseOnAHungDisk(t *testing.T) {
	var hang atomic.Bool
	release := make(chan struct{})
	var once sync.Once
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if hang.Load() && strings.HasSuffix(op.Path, ".sst") {
			<-release
		}
		return nil
	})
	mem := vfs.NewMem()
	cfg := DefaultConfig()
	cfg.fs = errorfs.Wrap(mem, inj)
	cfg.closeWait = 200 * time.Millisecond
	dir := t.TempDir()
	s, err := Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer once.Do(func() { close(release) })
	mustMakeBucket(t, s, "bkt")
	if err := s.Commit(ctx, inlined("bkt", "a", stamp(1, "w"), []byte("a")), nil); err != nil {
		t.Fatal(err)
	}
	hang.Store(true)
	start := time.Now()
	err = s.Close()
	wantErr(t, "close on a hung disk", err, ErrCloseTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("close took %s with a bound of %s", d, cfg.closeWait)
	}
	// The abandoned close still holds pebble's lock on the index: a
	// reopen must wait until it has finished.
	hang.Store(false)
	once.Do(func() { close(release) })
	cfg.closeWait = 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err = Open(dir, cfg)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reopen after the disk came back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer s.Close()
	if o, err := s.ReadMeta(ctx, "bkt", "a"); err != nil || string(o.Inline) != "a" {
		t.Fatalf("acknowledged record after the reopen: %v", err)
	}
}

// TestCloseAfterTheIndexIsGone: a disk wiped under a running store. A
// flush would have to start a new log in a directory that is gone, which
// pebble answers by ending the process; Close skips the flush instead,
// and the test binary lives to report.
func TestCloseAfterTheIndexIsGone(t *testing.T) {
	s := newStore(t)
	if err := s.Commit(ctx, inlined("bkt", "a", stamp(1, "w"), []byte("a")), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s.Dir(), "index")); err != nil {
		t.Fatal(err)
	}
	_ = s.Close() // an error or none: what matters is that it returns
}

// TestCloseAfterADiskFull: a store that ran out of space closes without
// the flush, which would need room for a new log and a table.
func TestCloseAfterADiskFull(t *testing.T) {
	s := newStore(t)
	if err := s.Commit(ctx, inlined("bkt", "a", stamp(1, "w"), []byte("a")), nil); err != nil {
		t.Fatal(err)
	}
	s.fullAt.Store(time.Now().UnixNano())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := tables(t, s.Dir()); n != 0 {
		t.Fatalf("%d tables: a store that ran out of space was flushed", n)
	}
}
