package storage

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"tessera/meta"
)

// TestIndexWriteFails: a WAL write that fails (a full disk) breaks pebble's
// commit pipeline for good. The commit reports ErrDiskFull, the store
// fails every later call with ErrIndexFailed, and the process, which may
// serve other stores, goes on; reopening the store finds what was durable.
func TestIndexWriteFails(t *testing.T) {
	var full atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	})
	cfg := DefaultConfig()
	cfg.fs = errorfs.Wrap(vfs.NewMem(), inj)
	s, err := Open(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustMakeBucket(t, s, "bkt")
	if err := s.Commit(ctx, inlined("bkt", "a", stamp(1, "w"), []byte("a")), nil); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	err = s.Commit(ctx, inlined("bkt", "b", stamp(1, "w"), []byte("b")), nil)
	wantErr(t, "commit on a full disk", err, ErrDiskFull)
	_, err = s.ReadMeta(ctx, "bkt", "a")
	wantErr(t, "read after the failure", err, ErrIndexFailed)
	wantErr(t, "close", s.Close(), ErrIndexFailed)
	full.Store(false)
	s, err = Open(s.Dir(), cfg)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if o, err := s.ReadMeta(ctx, "bkt", "a"); err != nil || string(o.Inline) != "a" {
		t.Fatalf("acknowledged record after the reopen: %v", err)
	}
	if _, err := s.ReadMeta(ctx, "bkt", "b"); err != nil && !errorsIs(err, meta.ErrNotFound) {
		t.Fatalf("unacknowledged record after the reopen: %v", err)
	}
}
