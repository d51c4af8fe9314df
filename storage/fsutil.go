package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"tessera/meta"
)

// maxRecordLen bounds record reads; the codec rejects larger records anyway.
const maxRecordLen = 64<<20 + 4096

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return ioErr("open dir for sync", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return ioErr("sync dir "+dir, err)
	}
	return nil
}

// mkdirs makes dir and its missing parents below root, fsyncing the parent
// of every dir it creates so the new entry survives a crash.
func mkdirs(root, dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
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
		parent := p
		p = filepath.Join(p, c)
		err := os.Mkdir(p, 0o755)
		if err == nil {
			if err := syncDir(parent); err != nil {
				return err
			}
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return ioErr("mkdir", err)
		}
	}
	return nil
}

// readFile reads a record file, refusing anything that is not a regular
// file of plausible size: garbage on disk must not cost unbounded memory.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ioErr("stat record", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", meta.ErrCorrupt, path)
	}
	if fi.Size() > maxRecordLen {
		return nil, fmt.Errorf("%w: %s is %d bytes", meta.ErrCorrupt, path, fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordLen+1))
	if err != nil {
		return nil, ioErr("read record", err)
	}
	if len(b) > maxRecordLen {
		return nil, fmt.Errorf("%w: %s grew past the record limit", meta.ErrCorrupt, path)
	}
	return b, nil
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
