package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"tessera/meta"
)

// diskModel keeps what fsyncs made durable, pessimistically: a dir holds
// the entries it had when it was last fsynced, a file the content it had
// when it was last fsynced (empty if never), and nothing else survives a
// crash. Dirs and files are keyed by inode, so links and renames are
// followed as the filesystem follows them. It holds every inode it saw
// open, so that none is reused for another file while the test runs.
type diskModel struct {
	rec   sync.Mutex // serialises record
	mu    sync.Mutex
	held  []*os.File
	root  uint64
	dirs  map[uint64]map[string]uint64 // dir -> entry name -> inode
	isDir map[uint64]bool
	files map[uint64][]byte
}

func inode(fi fs.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }

// record notes what an fsync of path, starting now, makes durable. Records
// run one at a time: a listing read before a concurrent record's must not
// be stored after it, which would make the model forget entries a real
// fsync covered.
func (m *diskModel) record(path string) {
	m.rec.Lock()
	defer m.rec.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return
	}
	m.mu.Lock()
	m.held = append(m.held, f)
	m.mu.Unlock()
	ino := inode(fi)
	if !fi.IsDir() {
		b, err := os.ReadFile(path)
		if err == nil {
			m.mu.Lock()
			m.files[ino] = b
			m.mu.Unlock()
		}
		return
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return
	}
	listing := map[string]uint64{}
	kinds := map[uint64]bool{}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		listing[e.Name()] = inode(info)
		kinds[inode(info)] = e.IsDir()
	}
	m.mu.Lock()
	m.dirs[ino] = listing
	maps.Copy(m.isDir, kinds)
	m.isDir[ino] = true
	m.mu.Unlock()
}

// diskState is a copy of the model at one instant.
type diskState struct {
	dirs  map[uint64]map[string]uint64
	isDir map[uint64]bool
	files map[uint64][]byte
}

func (m *diskModel) state() diskState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return diskState{maps.Clone(m.dirs), maps.Clone(m.isDir), maps.Clone(m.files)}
}

// build writes the disk a crash leaves into dst.
func (d diskState) build(t *testing.T, root uint64, dst string) {
	t.Helper()
	var walk func(ino uint64, to string)
	walk = func(ino uint64, to string) {
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, child := range d.dirs[ino] {
			if d.isDir[child] {
				walk(child, filepath.Join(to, name))
				continue
			}
			if err := os.WriteFile(filepath.Join(to, name), d.files[child], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	walk(root, dst)
}

// crashState is what a crash at one instant leaves: the files as the
// model has them, and the index as pebble's crashable filesystem has it.
type crashState struct {
	disk  diskState
	index *vfs.MemFS
}

// build writes the crashed store into a fresh dir and returns it with
// the filesystem its index is in.
func (c crashState) build(t *testing.T, root uint64, src string) (string, vfs.FS) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crash")
	c.disk.build(t, root, dst)
	if err := c.index.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.index.Rename(filepath.Join(src, "index"), filepath.Join(dst, "index")); err != nil {
		t.Fatal(err)
	}
	return dst, c.index
}

// TestFsyncCrash runs concurrent commits of inlined records, tombstones and
// stored objects while recording what each fsync makes durable, and the
// index in pebble's crashable in-memory filesystem. It then rebuilds the
// store a crash would leave at every fsync, after every index batch and
// at every acknowledgement, and checks that
//   - an acknowledged commit survives;
//   - every record on a crashed disk reads back whole, also when the
//     index kept writes it had not synced: a record never points at data,
//     or is itself content, that no fsync covered.
//
// A batch that flushed too few paths, or an index batch applied before
// the flush that makes its data durable, fails it.
func TestFsyncCrash(t *testing.T) {
	memfs := vfs.NewCrashableMem()
	cfg := DefaultConfig()
	cfg.fs = memfs
	s, err := Open(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustMakeBucket(t, s, "bkt")
	fi, err := os.Stat(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	m := &diskModel{root: inode(fi), dirs: map[uint64]map[string]uint64{}, isDir: map[uint64]bool{}, files: map[uint64][]byte{}}
	defer func() {
		for _, f := range m.held {
			f.Close()
		}
	}()
	// What Open and MakeBucket left is taken as durable.
	filepath.WalkDir(s.Dir(), func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			m.record(p)
		}
		return nil
	})
	const writers = 4
	type ack struct {
		key   string
		st    meta.Stamp
		state crashState
	}
	var (
		mu     sync.Mutex
		states []crashState
		acks   []ack
		rng    = rand.New(rand.NewPCG(1, 1))
	)
	// now is what a crash at this instant leaves, the disk and the index
	// (as synced, or also with the writes it has not synced) taken at one
	// instant: under the model's record lock, so that no fsync is recorded
	// in between. Otherwise a commit could record its flush after the
	// disk was taken and apply its index batch before the index was, and
	// the pair would show a record whose data no crash could lose.
	now := func(unsynced bool) crashState {
		m.rec.Lock()
		defer m.rec.Unlock()
		cfg := vfs.CrashCloneCfg{}
		if unsynced {
			cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rng}
		}
		return crashState{m.state(), memfs.CrashClone(cfg)}
	}
	// snap takes the states a crash now could leave: the index as synced,
	// and the index with every write it has made.
	snap := func() {
		synced, all := now(false), now(true)
		mu.Lock()
		defer mu.Unlock()
		states = append(states, synced, all)
	}
	old, oldApplied := syncFile, applied
	syncFile = func(f *os.File) error {
		m.record(f.Name())
		snap()
		return old(f)
	}
	applied = snap
	defer func() { syncFile, applied = old, oldApplied }()

	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("key-", w)
			for i := 1; i <= 4; i++ {
				st := stamp(int64(i), fmt.Sprint("w", w))
				var err error
				switch (w + i) % 3 {
				case 0:
					err = s.Commit(ctx, inlined("bkt", key, st, payload(st)), nil)
				case 1:
					err = commitTombstone(s, w%2 == 1, object("bkt", key, st))
				default:
					p := payload(st)
					var ids []string
					for _, part := range [][]byte{p, p[:7]} {
						id, serr := s.StageShard(ctx, bytes.NewReader(part))
						if serr != nil {
							t.Error(serr)
							return
						}
						ids = append(ids, id)
					}
					err = s.Commit(ctx, object("bkt", key, st, p, p[:7]), ids)
				}
				if err != nil {
					t.Error(err)
					return
				}
				a := ack{key, st, now(false)}
				mu.Lock()
				acks = append(acks, a)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	syncFile, applied = old, oldApplied
	if t.Failed() {
		return
	}

	for _, a := range acks {
		dst, ifs := a.state.build(t, m.root, s.Dir())
		o := crashedRecord(t, dst, ifs, a.key)
		if o == nil || o.Stamp.Less(a.st) {
			t.Errorf("%s %v acknowledged, lost in a crash right after (disk holds %v)", a.key, a.st, stampOf(o))
		}
	}
	for i, st := range states {
		dst, ifs := st.build(t, m.root, s.Dir())
		for w := 0; w < writers; w++ {
			if t.Failed() {
				t.Fatalf("crash at state %d (index unsynced writes kept: %v)", i+1, i%2 == 1)
			}
			crashedRecord(t, dst, ifs, fmt.Sprint("key-", w))
		}
	}
}

// commitTombstone commits o by Commit or, batched, by CommitTombstones.
func commitTombstone(s *Store, batched bool, o *meta.Object) error {
	if !batched {
		return s.Commit(ctx, o, nil)
	}
	errs, err := s.CommitTombstones(ctx, o.Bucket, []*meta.Object{o})
	if err != nil {
		return err
	}
	return errs[0]
}

// crashedRecord opens the store in dir, reads key whole, the versions it
// keeps included (no version is settled here, so every replaced one is
// kept), once the sweep after Open has run, and returns its current
// record, nil if there is none. A damaged record or shard fails the test:
// a crash must leave the old version or the new one.
func crashedRecord(t *testing.T, dir string, ifs vfs.FS, key string) *meta.Object {
	t.Helper()
	cfg := DefaultConfig()
	cfg.fs = ifs
	s, err := Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitSweep(s)
	os, err := s.ReadVersions(ctx, "bkt", key)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Errorf("%s after the crash: %v", key, err)
		return nil
	}
	for _, o := range os {
		checkCrashedVersion(t, s, key, o)
	}
	if want := min(int(os[0].Stamp.Nanos), MaxKept+1); len(os) != want {
		t.Errorf("%s %v after the crash: %d versions, want %d", key, os[0].Stamp, len(os), want)
	}
	return os[0]
}

// checkCrashedVersion reads version o of key whole.
func checkCrashedVersion(t *testing.T, s *Store, key string, o *meta.Object) {
	t.Helper()
	want := payload(o.Stamp)
	switch {
	case o.Deleted:
	case o.Inlined:
		if !bytes.Equal(o.Inline, want) {
			t.Errorf("%s %v after the crash: inline bytes differ", key, o.Stamp)
		}
	default:
		for i, p := range [][]byte{want, want[:7]} {
			got, err := readShard(t, s, "bkt", key, o.Stamp, i+1)
			if err != nil || !bytes.Equal(got, p) {
				t.Errorf("%s %v part %d after the crash: %v (%d bytes)", key, o.Stamp, i+1, err, len(got))
			}
		}
	}
}

func stampOf(o *meta.Object) any {
	if o == nil {
		return "no record"
	}
	return o.Stamp
}
