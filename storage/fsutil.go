package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"tessera/meta"
)

// maxRecordLen bounds record reads; the codec rejects larger records anyway.
const maxRecordLen = 64<<20 + 4096

// mkdirs makes dir and its missing parents below root and adds to b the
// parent of every dir on the way whose entry is not yet durable: the ones
// it creates, and the ones a concurrent writer created and has not flushed
// yet (that writer's flush may come after ours). The entries are durable
// once b is flushed, which must happen before anything durable points
// into them.
func mkdirs(root, dir string, b *syncBatch) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		b.coverFresh(root, dir)
		return nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("mkdirs: %s is not under %s", dir, root)
	}
	p := root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if c == "." {
			continue
		}
		p = filepath.Join(p, c)
		err := os.Mkdir(p, 0o755)
		if err == nil {
			b.made(p)
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return ioErr("mkdir", err)
		}
		b.coverFresh(p, p)
	}
	return nil
}

// readFile reads a record file, refusing anything that is not a regular
// file of plausible size: garbage on disk must not cost unbounded memory.
func readFile(path string) ([]byte, error) {
	// Plain system calls rather than os.Open: a record is read whole in
	// one go, so registering the descriptor with the runtime's poller
	// (which os.Open tries for every file) and growing a buffer as
	// io.ReadAll does were a fifth of a small GET's CPU.
	fd, err := retryEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, ioErr("stat record", &fs.PathError{Op: "stat", Path: path, Err: err})
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%w: %s is not a regular file", meta.ErrCorrupt, path)
	}
	if st.Size > maxRecordLen {
		return nil, fmt.Errorf("%w: %s is %d bytes", meta.ErrCorrupt, path, st.Size)
	}
	// One byte more than the size, so a file that grew since is seen.
	b := make([]byte, st.Size+1)
	n := 0
	for n < len(b) {
		m, err := retryEINTR(func() (int, error) { return syscall.Read(fd, b[n:]) })
		if err != nil {
			return nil, ioErr("read record", &fs.PathError{Op: "read", Path: path, Err: err})
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n > int(st.Size) {
		return nil, fmt.Errorf("%w: %s grew while read", meta.ErrCorrupt, path)
	}
	return b[:n], nil
}

// retryEINTR calls f again while it is interrupted by a signal (the Go
// runtime sends them to preempt goroutines).
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// place makes src visible as dst. A hard link leaves src in place, so a
// commit that fails later can be retried with the same staged files; rename
// is the fallback for filesystems without links. An existing dst (left by
// an earlier failed attempt) is replaced.
func place(src, dst string) error {
	err := os.Link(src, dst)
	if errors.Is(err, fs.ErrExist) {
		if rerr := os.Remove(dst); rerr != nil {
			return ioErr("replace "+dst, rerr)
		}
		err = os.Link(src, dst)
	}
	if err == nil || isNotExist(err) {
		return err
	}
	if rerr := os.Rename(src, dst); rerr != nil {
		return ioErr("place "+dst, rerr)
	}
	return nil
}
