package storage

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
)

// DefaultRetireGrace is how long the shard files of a replaced version
// stay readable (Config.RetireGrace).
const DefaultRetireGrace = 2 * time.Minute

// Superseded versions.
//
// A commit that replaces a version holding shard files (an overwrite, a
// delete, a completed upload over an object) does not remove the old
// version's data dir: it retires it. The dir stays where it is, so
// OpenShard still finds it by its stamp, and a background reaper removes
// it once the grace period has passed. A reader that resolved the old
// version from the records a moment before the commit therefore still
// reads it whole, and the commit itself does no removal.
//
// Why a grace period and not a count of open reads: the read at risk holds
// nothing on this peer yet. It has read the record (here or on another
// peer) and will open its shards next; the peer cannot count a read it
// has not seen. Once a shard file is open, the kernel already keeps the
// bytes of an unlinked file readable until it is closed, so counting opens
// would add nothing. The gap the grace period must cover is the one from a
// gateway's metadata read to its shard opens: milliseconds, or the wait
// in a fetch pool, or the time to stream the earlier parts of a multipart
// object. A read that opens a part later than the grace period after
// resolving can still find it gone.
//
// Replaced data is held for space as long as that: a sustained overwrite
// load keeps its write rate times the grace period on disk. So while free
// space is short (underPressure) the reaper removes every retired dir at
// once, and a write about to be refused for space removes them first.
//
// The list of retired dirs lives in memory. A crash or Close leaves them
// in their object dirs, where the sweep that runs after the next Open
// removes every data dir the record does not name (sweep.go); nothing
// retired outlives the sweep after a restart.

// retiredDir is one data dir waiting for its grace period to end.
type retiredDir struct {
	bucket, key string
	name        string // data dir name within the object dir
	due         time.Time
}

// reaper removes retired data dirs when they fall due. Entries join in
// commit order with one grace period, so the queue is ordered by due.
type reaper struct {
	mu    sync.Mutex
	queue []retiredDir
	kick  chan struct{} // buffered: a first entry was queued
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newReaper() *reaper {
	return &reaper{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// retire schedules the data dir name of bucket/key for removal after the
// grace period; with a negative grace it is removed at once. The caller
// holds the key lock and has made the record that replaced it durable.
func (s *Store) retire(bucket, key, name string) {
	if s.grace < 0 {
		if err := os.RemoveAll(filepath.Join(s.objDir(bucket, key), name)); err != nil {
			s.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).Msg("removing replaced data")
		}
		return
	}
	r := s.reaper
	r.mu.Lock()
	r.queue = append(r.queue, retiredDir{bucket: bucket, key: key, name: name, due: s.now().Add(s.grace)})
	first := len(r.queue) == 1
	r.mu.Unlock()
	if first {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// pressureCheck is how often the reaper checks free space while dirs
// wait in its queue (underPressure).
const pressureCheck = time.Second

// runReaper removes retired dirs as they fall due until Close, and all of
// them at once while free space is short.
func (s *Store) runReaper() {
	r := s.reaper
	defer close(r.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if s.retiredCount() > 0 && s.underPressure() {
			s.reapAll()
		}
		next, ok := s.reapDue(s.now())
		wait := time.Hour
		if ok {
			wait = min(max(next.Sub(s.now()), time.Millisecond), pressureCheck)
		}
		timer.Reset(wait)
		select {
		case <-r.stop:
			return
		case <-r.kick:
		case <-timer.C:
		}
	}
}

// stopReaper ends runReaper and waits for it; what is still queued stays
// on disk for the sweep after the next Open to remove.
func (s *Store) stopReaper() {
	s.reaper.once.Do(func() { close(s.reaper.stop) })
	<-s.reaper.done
}

// reapDue removes every retired dir due by now and returns when the next
// one falls due (ok false: none is queued).
func (s *Store) reapDue(now time.Time) (next time.Time, ok bool) {
	r := s.reaper
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return time.Time{}, false
		}
		d := r.queue[0]
		if d.due.After(now) {
			r.mu.Unlock()
			return d.due, true
		}
		r.queue[0] = retiredDir{}
		r.queue = r.queue[1:]
		r.mu.Unlock()
		s.reap(d)
	}
}

// reapAll removes every retired dir now, due or not.
func (s *Store) reapAll() { s.reapDue(s.now().Add(s.grace + time.Hour)) }

// retiredCount is the number of dirs waiting for removal.
func (s *Store) retiredCount() int {
	s.reaper.mu.Lock()
	defer s.reaper.mu.Unlock()
	return len(s.reaper.queue)
}

// reap removes one retired dir unless the key's record names it again (a
// damaged record was replaced by the same version, which reinstalled the
// dir). The check and the hiding rename happen under the key lock, so no
// commit can come to rely on the dir in between; the removal itself runs
// outside it, from the staging area, which Open wipes should it stop half
// way.
func (s *Store) reap(d retiredDir) {
	log := s.log.With().Str("bucket", d.bucket).Str("key", d.key).Logger()
	unlock := s.lockKey(d.bucket, d.key)
	v, cur, err := s.readHead(d.bucket, d.key)
	if err == nil && hasData(cur) && dataDirName(cur.Stamp) == d.name {
		unlock()
		return
	}
	if kept := s.keptDirs(d.bucket, d.key, v); kept == nil || kept[d.name] {
		unlock()
		return // a kept version still names it, or may
	}
	hidden := s.stagedPath(uuid.NewString())
	err = os.Rename(filepath.Join(s.objDir(d.bucket, d.key), d.name), hidden)
	unlock()
	if isNotExist(err) {
		return // dropped with its object or bucket, or reaped before
	}
	if err != nil {
		log.Warn().Err(err).Msg("hiding replaced data")
		return
	}
	if err := os.RemoveAll(hidden); err != nil {
		log.Warn().Err(err).Str("path", hidden).Msg("removing replaced data")
	}
}
