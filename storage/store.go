package storage

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
}

// DefaultConfig returns a Config that logs nothing.
func DefaultConfig() Config { return Config{Logger: zerolog.Nop()} }

const lockStripes = 256

// Store is one peer's data directory. Open it once per directory: two
// Stores on one directory would not share their locks or index.
type Store struct {
	dir        string
	tmpDir     string
	bucketsDir string
	log        zerolog.Logger

	// bmu orders bucket creation and deletion against everything that
	// writes inside a bucket: writers hold it shared, bucket ops exclusive.
	bmu   sync.RWMutex
	locks [lockStripes]sync.Mutex
	idx   *index

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
}

// Open opens (creating if needed) the store in dir, wipes its staging area
// and rebuilds the key index by reading every object record. Damaged
// records are logged and skipped; Open fails only when dir itself is unusable.
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
		idx:        newIndex(),
		grace:      cfg.RetireGrace,
		now:        cfg.Now,
		reaper:     newReaper(),
		afterFunc:  func(d time.Duration, f func()) { time.AfterFunc(d, f) },
	}
	if s.grace == 0 {
		s.grace = DefaultRetireGrace
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
	start := time.Now()
	n := s.loadIndex()
	s.log.Info().Int("objects", n).Dur("dur", time.Since(start)).Msg("store opened")
	go s.runReaper()
	return s, nil
}

// Close makes every later call fail with ErrClosed and stops the removal
// of retired versions (the next Open removes what is left). It does not
// wait for calls in flight; nothing is buffered, so there is nothing to
// flush. Safe to call more than once.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.stopReaper()
	return nil
}

// Dir returns the absolute data directory.
func (s *Store) Dir() string { return s.dir }

// Stat reports the filesystem's capacity and the bytes available to this
// process, for gossip.
func (s *Store) Stat() (capacity, free uint64, err error) {
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

// lockKey takes the bucket lock shared and the key's stripe; the returned
// func releases both.
func (s *Store) lockKey(bucket, key string) func() {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	h.Write([]byte{0})
	h.Write([]byte(key))
	mu := &s.locks[h.Sum32()%lockStripes]
	s.bmu.RLock()
	mu.Lock()
	return func() {
		mu.Unlock()
		s.bmu.RUnlock()
	}
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

// writeRecord durably replaces dir/name with data: temp file, fsync,
// rename, fsync dir. A crash leaves the old file or the new one.
func (s *Store) writeRecord(dir, name string, data []byte) error {
	_, err := s.replaceRecord(dir, name, data)
	return err
}

// replaceRecord is writeRecord that also reports whether the new file
// became visible: after a failed dir fsync it has, and the caller must not
// undo what the new record points at.
func (s *Store) replaceRecord(dir, name string, data []byte) (visible bool, err error) {
	f, id, err := s.createTmp()
	if err != nil {
		return false, err
	}
	tmp := s.stagedPath(id)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
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
	return true, syncDir(dir)
}

// removeTree moves dir into the staging area (atomically hiding it) and
// then deletes it; a crash mid-delete leaves garbage only in staging,
// which Open wipes.
func (s *Store) removeTree(dir string) error {
	hidden := s.stagedPath(uuid.NewString())
	if err := os.Rename(dir, hidden); err != nil {
		return ioErr("hide "+dir, err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.RemoveAll(hidden); err != nil {
		s.log.Warn().Err(err).Str("path", hidden).Msg("removing hidden tree")
	}
	return nil
}
