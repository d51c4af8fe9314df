package storage

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// syncBatch collects the changes of one operation that must become durable
// together before its next step: a flush fsyncs every collected path, files
// and dirs alike, in parallel.
type syncBatch struct {
	paths []string
	files []*os.File // open files to sync through their own descriptor
	// fresh is the store's set of dirs whose entry in their parent may not
	// be durable yet; covers are those of them this batch's flush makes
	// durable (it syncs their parents).
	fresh  *sync.Map
	covers []string
}

// batch starts a syncBatch.
func (s *Store) batch() *syncBatch { return &syncBatch{fresh: &s.fresh} }

// made notes a dir this batch created: its parent joins the batch, and
// until the flush it is fresh to every other writer.
func (b *syncBatch) made(dir string) {
	b.fresh.Store(dir, struct{}{})
	b.cover(dir)
}

// cover adds dir's parent to the batch, making dir's entry durable.
func (b *syncBatch) cover(dir string) {
	b.add(filepath.Dir(dir))
	b.covers = append(b.covers, dir)
}

// coverFresh covers every fresh dir from dir up to (and including) top:
// dirs another writer created whose entries its flush has not made
// durable yet. Only an in-memory lookup per level: no system call.
func (b *syncBatch) coverFresh(top, dir string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, ok := b.fresh.Load(d); ok {
			b.cover(d)
		}
		if d == top || !strings.HasPrefix(d, top) || d == filepath.Dir(d) {
			return
		}
	}
}

// add notes paths whose content (a file) or entries (a dir) the next flush
// must make durable.
func (b *syncBatch) add(paths ...string) { b.paths = append(b.paths, paths...) }

// addFile notes an open file the next flush must make durable, through
// its own descriptor: no open and close by name. The caller closes it.
func (b *syncBatch) addFile(f *os.File) { b.files = append(b.files, f) }

// flush fsyncs the paths added since the last flush. The fsyncs run in
// parallel: the filesystem commits concurrent fsyncs together (on ext4 one
// journal commit covers all that arrive while the previous one is written),
// so a batch costs about one fsync's latency instead of one per path.
func (b *syncBatch) flush() error {
	syncs := make([]func() error, 0, len(b.paths)+len(b.files))
	for _, p := range b.paths {
		syncs = append(syncs, func() error { return syncPath(p) })
	}
	for _, f := range b.files {
		syncs = append(syncs, func() error { return syncOpen(f) })
	}
	covers := b.covers
	b.paths, b.files, b.covers = nil, nil, nil
	err := runAll(syncs)
	if err == nil {
		for _, d := range covers {
			b.fresh.Delete(d)
		}
	}
	return err
}

// runAll runs syncs in parallel and returns the first error.
func runAll(syncs []func() error) error {
	switch len(syncs) {
	case 0:
		return nil
	case 1:
		return syncs[0]()
	}
	errs := make(chan error, len(syncs))
	for _, sync := range syncs {
		go func() { errs <- sync() }()
	}
	var first error
	for range syncs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// syncPath fsyncs a file or a dir by name. A fresh descriptor still reports
// a write error no one has seen yet, so this is as good as syncing the
// descriptor that wrote.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return ioErr("open for sync", err)
	}
	defer f.Close()
	return syncOpen(f)
}

// syncOpen fsyncs an open file or dir.
func syncOpen(f *os.File) error {
	if err := syncFile(f); err != nil {
		return ioErr("sync "+f.Name(), err)
	}
	return nil
}

// syncFile is f.Sync; crash tests replace it to record what each fsync
// made durable.
var syncFile = func(f *os.File) error { return f.Sync() }

// syncFS makes everything written to the filesystem holding dir durable.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return ioErr("open for syncfs", err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return ioErr("syncfs "+dir, err)
	}
	return nil
}
