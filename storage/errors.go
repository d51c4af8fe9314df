package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"tessera/meta"
)

// Errors callers branch on, besides the meta sentinels.
var (
	// ErrInvalidArgument reports a malformed bucket name, key, upload ID,
	// staged ID, stamp or part list. Nothing was touched. It is the meta
	// sentinel, so layers above the peer client recognise it.
	ErrInvalidArgument = meta.ErrInvalidArgument
	// ErrStagedNotFound reports a staged ID with no staged file (never
	// staged, already committed, or wiped by a restart).
	ErrStagedNotFound = errors.New("staged shard not found")
	// ErrInvalidPart reports a completed part that the upload does not hold
	// or whose ETag differs.
	ErrInvalidPart = errors.New("invalid part")
	// ErrDiskFull reports a write that failed for lack of space, or new
	// shard data refused while the store is full (Space). It is the meta
	// sentinel, so the object layer recognises it through the peer client.
	ErrDiskFull = meta.ErrDiskFull
	// ErrClosed reports a call on a closed Store.
	ErrClosed = errors.New("store closed")
	// ErrIndexFailed reports a store whose index hit an error it cannot
	// go on from (a WAL write that failed, a full disk among the causes,
	// which the error then also wraps as ErrDiskFull). Every later call
	// fails with it; reopening the store recovers what was durable.
	ErrIndexFailed = errors.New("index failed")
	// ErrCloseTimeout: Close gave up waiting for the index to flush and
	// close (a disk that hangs); every acknowledged write is in its log.
	ErrCloseTimeout = errors.New("index close timed out")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// isNotExist also counts ENOTDIR: a path whose parent is a file (garbage on
// disk) names nothing, just like a missing one.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// ioErr wraps a filesystem error with op, adding ErrDiskFull when the
// filesystem ran out of space or quota.
func ioErr(op string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%s: %w: %w", op, ErrDiskFull, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
