package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// Config tunes a Store.
type Config struct {
	// Logger receives lifecycle (Info) and damage (Warn) events.
	Logger zerolog.Logger
	// RetireGrace is how long a replaced version's shard files stay
	// readable before they are removed in the background (see retire.go):
	// zero means DefaultRetireGrace, negative removes them at commit.
	RetireGrace time.Duration
	// Now is the reaper's clock (time.Now).
	Now func() time.Time
	// CacheSize is the index's block cache in bytes (zero:
	// DefaultCacheSize). With pebble's memtables (two of 4 MiB at most
	// in flight) it bounds the index's memory whatever the object count.
	CacheSize int64
	// Cache, when set, is the index's block cache instead, shared with
	// the other stores given it (CacheSize is then ignored).
	Cache *IndexCache

	// closeWait bounds Close's flush and close of the index (zero:
	// DefaultCloseWait; tests: a disk that hangs).
	closeWait time.Duration
	// fs replaces the filesystem of the index (tests: a crashable one).
	fs vfs.FS
	// statfs replaces the filesystem's capacity and free bytes (tests: a
	// disk filling up).
	statfs func() (capacity, free uint64, err error)
	// afterMigrateBatch runs after each batch of a layout upgrade (tests:
	// its progress seen mid-run).
	afterMigrateBatch func()
}

// DefaultConfig returns a Config that logs nothing.
func DefaultConfig() Config { return Config{Logger: zerolog.Nop()} }

const lockStripes = 256

// Store is one peer's data directory. Open it once per directory: the
// index refuses a second Open while the first is open (pebble locks it),
// and two Stores would not share their key locks anyway.
type Store struct {
	dir        string
	tmpDir     string
	bucketsDir string
	log        zerolog.Logger

	// bmu orders bucket creation and deletion against everything that
	// writes inside a bucket: writers hold it shared, bucket ops exclusive.
	bmu   sync.RWMutex
	locks [lockStripes]sync.Mutex
	// db is the index (db.go): object records and the live counts.
	// dbmu is held shared by every call that uses it and exclusively
	// by Close, which closes it.
	db   *pebble.DB
	dbmu sync.RWMutex
	// failed holds pebble's fatal error once a commit hit one: every
	// later call fails with it (ErrIndexFailed), and Close leaves the
	// broken database to the process's end.
	failed atomic.Pointer[fatalError]
	// gen numbers record writes (StatRecord); it starts at the clock so
	// that numbers stay unique across restarts.
	gen atomic.Uint64
	// sweep collects the leftovers of crashed commits (sweep.go).
	sweep *sweeper
	// fresh holds the dirs created whose entries are not yet durable
	// (see syncBatch).
	fresh sync.Map

	grace  time.Duration
	now    func() time.Time
	reaper *reaper
	// afterFunc runs f once d has passed (time.AfterFunc; tests step it).
	afterFunc func(d time.Duration, f func())

	closed atomic.Bool
	// fullAt is when a write last ran out of space (unix nanos; 0: never),
	// fullFree the free bytes statfs reported then.
	fullAt   atomic.Int64
	fullFree atomic.Uint64
	statfs   func() (capacity, free uint64, err error) // Config.statfs
	// closeWait is Config.closeWait.
	closeWait time.Duration
	// fs is the index's filesystem (Config.fs, else the OS's): pebble's,
	// and what Close checks before it flushes.
	fs vfs.FS
	// afterMigrateBatch is Config.afterMigrateBatch.
	afterMigrateBatch func()
	// placer is the peer's view of the layout (SetPlacer); nil until set.
	placer atomic.Pointer[placerBox]
}

// Open opens (creating if needed) the store in dir, wipes its staging area
// and opens the index in DIR/index. It reads no object record, so its time
// does not grow with the object count; the one exception is the first
// Open of a store in the old layout (a record file per object), which
// moves those records into the index (layout.go), publishing its
// progress (LayoutUpgrades). Leftovers of
// crashed commits are collected by a sweep in the background (sweep.go).
// Open fails when dir or the index is unusable.
func Open(dir string, cfg Config) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s := &Store{
		dir:        abs,
		tmpDir:     filepath.Join(abs, ".tmp"),
		bucketsDir: filepath.Join(abs, "buckets"),
		log:        cfg.Logger.With().Str("component", "storage").Str("dir", abs).Logger(),
		sweep:      newSweeper(),
		grace:      cfg.RetireGrace,
		now:        cfg.Now,
		reaper:     newReaper(),
		afterFunc:  func(d time.Duration, f func()) { time.AfterFunc(d, f) },
		statfs:     cfg.statfs,
		closeWait:  cfg.closeWait,
		fs:         cfg.fs,

		afterMigrateBatch: cfg.afterMigrateBatch,
	}
	if s.grace == 0 {
		s.grace = DefaultRetireGrace
	}
	if s.fs == nil {
		s.fs = vfs.Default
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, ioErr("open store", err)
	}
	// Staged files of a previous run can never be committed: their ids
	// died with the requests that staged them.
	if err := os.RemoveAll(s.tmpDir); err != nil {
		return nil, ioErr("wipe staging", err)
	}
	for _, d := range []string{s.tmpDir, s.bucketsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, ioErr("open store", err)
		}
	}
	// This run treats every dir it finds as durable (nothing is fresh at
	// start), but a previous run may have stopped between a mkdir and its
	// flush: one syncfs makes all it left durable before anything builds
	// on it.
	if err := syncFS(abs); err != nil {
		return nil, err
	}
	start := time.Now()
	if s.db, err = openDB(indexDir(abs), s.fs, cfg, s.log); err != nil {
		return nil, err
	}
	s.gen.Store(uint64(time.Now().UnixNano()))
	n, err := s.migrateLayout()
	if err == nil {
		_, err = s.indexTombstones()
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	s.log.Info().Int64("objects", s.LiveObjects()).Int("migrated", n).Dur("dur", time.Since(start)).Msg("store opened")
	go s.runReaper()
	go s.runSweep()
	openStores.Lock()
	openStores.m[abs] = s
	openStores.Unlock()
	return s, nil
}

// Close makes every later call fail with ErrClosed, stops the removal of
// retired versions and the sweep (the next Open's sweep removes what is
// left), waits for the calls in flight that use the index and closes it.
// Every acknowledged write is already durable. Safe to call more than once.
func (s *Store) Close() error {
	s.closed.Store(true)
	openStores.Lock()
	if openStores.m[s.dir] == s {
		delete(openStores.m, s.dir)
	}
	openStores.Unlock()
	s.stopReaper()
	s.stopSweep()
	s.dbmu.Lock()
	defer s.dbmu.Unlock()
	if s.db == nil {
		return nil
	}
	if fe := s.failed.Load(); fe != nil {
		// Pebble may report the broken pipeline again while closing.
		func() {
			defer func() { recover() }()
			s.db.Close()
		}()
		s.db = nil
		return fmt.Errorf("close index: %w: %w", ErrIndexFailed, fe)
	}
	err := s.closeDB()
	s.db = nil
	return err
}

// DefaultCloseWait bounds how long Close waits for the index to flush its
// memtables and close.
const DefaultCloseWait = 10 * time.Second

// closeDB flushes the memtables before closing, so that the next Open
// finds its records in tables rather than replaying the write-ahead log
// and flushing it while the first requests wait. Every write is already
// durable in that log, so the flush only saves time: if the disk hangs
// and it does not finish in time, Close returns ErrCloseTimeout and
// leaves the index to finish closing on its own (the process is exiting;
// the next Open replays the log as it would after a crash).
func (s *Store) closeDB() error {
	db, wait := s.db, s.closeWait
	if wait <= 0 {
		wait = DefaultCloseWait
	}
	flush := s.flushSafe()
	done := make(chan error, 1)
	go func() {
		var ferr error
		if flush {
			ferr = db.Flush()
		}
		done <- errors.Join(ferr, db.Close())
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("close index: %w", err)
		}
		return nil
	case <-t.C:
		s.log.Error().Dur("wait", wait).Msg("index did not close in time; its log holds every write")
		return fmt.Errorf("close index: %w after %s", ErrCloseTimeout, wait)
	}
}

// flushSafe reports whether Close may flush the index. A flush starts a
// new write-ahead log, and pebble ends the process when it cannot create
// one (a fatal error, past any recover); so a store whose index directory
// is gone (a disk wiped or unmounted under it) or that ran out of space
// since it opened closes without the flush.
func (s *Store) flushSafe() bool {
	if s.fullAt.Load() != 0 {
		return false
	}
	_, err := s.fs.Stat(indexDir(s.dir))
	return err == nil
}

// Dir returns the absolute data directory.
func (s *Store) Dir() string { return s.dir }

// Stat reports the filesystem's capacity and the bytes available to this
// process, for gossip.
func (s *Store) Stat() (capacity, free uint64, err error) {
	if s.statfs != nil {
		return s.statfs()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", s.dir, err)
	}
	bs := uint64(st.Bsize)
	return st.Blocks * bs, st.Bavail * bs, nil
}

func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// Failed is the error every call now fails with if the index hit one it
// cannot go on from (ErrIndexFailed), nil otherwise: such a store takes
// nothing until it is reopened.
func (s *Store) Failed() error {
	if fe := s.failed.Load(); fe != nil {
		return ioErr("store", fmt.Errorf("%w: %w", ErrIndexFailed, fe))
	}
	return nil
}

// enter is check for calls that use the index: it holds Close off until
// the returned func is called.
func (s *Store) enter(ctx context.Context) (func(), error) {
	s.dbmu.RLock()
	if s.db == nil || s.closed.Load() {
		s.dbmu.RUnlock()
		return nil, ErrClosed
	}
	if err := s.Failed(); err != nil {
		s.dbmu.RUnlock()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		s.dbmu.RUnlock()
		return nil, err
	}
	return s.dbmu.RUnlock, nil
}

// lockKey takes the bucket lock shared and the key's stripe; the returned
// func releases both.
func (s *Store) lockKey(bucket, key string) func() { return s.lockHash(bucket, keyHash(key)) }

// lockHash is lockKey by the key's hash, which names its object dir: the
// sweep, walking dirs, locks a key it does not know yet.
func (s *Store) lockHash(bucket, hash string) func() {
	mu := &s.locks[stripe(bucket, hash)]
	s.bmu.RLock()
	mu.Lock()
	return func() {
		mu.Unlock()
		s.bmu.RUnlock()
	}
}

// lockKeys is lockKey for several keys of one bucket held together. Two
// keys can share a stripe, and a goroutine that takes a mutex it holds
// waits forever (on every peer at once, since all hash alike), so each
// stripe is taken once, in index order, under one shared bucket lock.
func (s *Store) lockKeys(bucket string, keys ...string) func() {
	idx := make([]uint32, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, stripe(bucket, keyHash(k)))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	s.bmu.RLock()
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for _, i := range slices.Backward(idx) {
			s.locks[i].Unlock()
		}
		s.bmu.RUnlock()
	}
}

// stripe is the lock stripe of a key's hash in bucket.
func stripe(bucket, hash string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	h.Write([]byte{0})
	h.Write([]byte(hash))
	return h.Sum32() % lockStripes
}

func (s *Store) bucketDir(bucket string) string { return filepath.Join(s.bucketsDir, bucket) }

func (s *Store) objDir(bucket, key string) string {
	h := keyHash(key)
	return filepath.Join(s.bucketsDir, bucket, "obj", h[:2], h)
}

func (s *Store) uploadsDir(bucket string) string {
	return filepath.Join(s.bucketsDir, bucket, "uploads")
}

func (s *Store) uploadDir(bucket, key, uploadID string) string {
	return filepath.Join(s.uploadsDir(bucket), keyHash(key), uploadID)
}

func (s *Store) stagedPath(id string) string { return filepath.Join(s.tmpDir, id) }

// createTmp creates a fresh file in the staging area, recreating the area
// if it vanished under us.
func (s *Store) createTmp() (*os.File, string, error) {
	id := uuid.NewString()
	path := s.stagedPath(id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if isNotExist(err) {
		if merr := os.MkdirAll(s.tmpDir, 0o755); merr != nil {
			return nil, "", ioErr("recreate staging", merr)
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return nil, "", ioErr("create staged file", err)
	}
	return f, id, nil
}

// writeRecord durably replaces dir/name with data: temp file, sync,
// rename, sync dir. A crash leaves the old file or the new one. b (nil: a
// fresh batch) holds earlier changes the record depends on: its first
// flush makes them durable along with the temp file, before the rename.
func (s *Store) writeRecord(dir, name string, data []byte, b *syncBatch) error {
	_, err := s.replaceRecord(dir, name, data, b)
	return err
}

// replaceRecord is writeRecord that also reports whether the new file
// became visible: after a failed dir sync it has, and the caller must not
// undo what the new record points at.
func (s *Store) replaceRecord(dir, name string, data []byte, b *syncBatch) (visible bool, err error) {
	if b == nil {
		b = s.batch()
	}
	f, id, err := s.createTmp()
	if err != nil {
		return false, err
	}
	tmp := s.stagedPath(id)
	_, err = f.Write(data)
	if err == nil {
		b.addFile(f)
		err = b.flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return false, ioErr("write record "+name, err)
	}
	b.add(dir)
	return true, b.flush()
}

// removeTree moves dir into the staging area (atomically hiding it) and
// then deletes it; a crash mid-delete leaves garbage only in staging,
// which Open wipes.
func (s *Store) removeTree(dir string) error {
	hidden := s.stagedPath(uuid.NewString())
	b := s.batch()
	if err := os.Rename(dir, hidden); err != nil {
		return ioErr("hide "+dir, err)
	}
	b.add(filepath.Dir(dir))
	if err := b.flush(); err != nil {
		return err
	}
	if err := os.RemoveAll(hidden); err != nil {
		s.log.Warn().Err(err).Str("path", hidden).Msg("removing hidden tree")
	}
	return nil
}
