package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrLocked reports a data directory another process holds.
var ErrLocked = errors.New("data directory in use by another process")

// DirLock is an exclusive advisory lock (flock) on a data directory. Two
// processes on one directory would wipe each other's staging area on start
// and race on every record, so whoever opens a directory takes this first
// and holds it for as long as it runs. The kernel drops the lock when the
// process dies, so a crash never leaves a stale lock behind.
type DirLock struct {
	f   *os.File
	dir string
}

// LockDir creates dir if it is missing and locks it without waiting. It
// fails with ErrLocked, having changed nothing, when another process (or
// another DirLock in this one) holds it. The lock is taken on the
// directory itself, so no lock file is ever left in it.
func LockDir(dir string) (*DirLock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, ioErr("lock "+abs, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", abs, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (is another tessera running on it? stop it or choose another directory)", abs, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", abs, err)
	}
	return &DirLock{f: f, dir: abs}, nil
}

// Dir is the locked directory's absolute path.
func (l *DirLock) Dir() string { return l.dir }

// Unlock releases the lock. Safe to call on nil and more than once.
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.dir, err)
	}
	return nil
}
