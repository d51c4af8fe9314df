package storage

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"tessera/meta"
)

// The sweep.
//
// A commit that crashes after placing its data and before its record is
// applied leaves a data dir no record names (an object dir too, for a
// key's first version); so does a replaced version retired by a run that
// stopped before its grace period ended, and a dropped object whose dir
// outlived its record. Open used to remove them by reading every record;
// now Open reads nothing, and the sweep walks the object dirs in the
// background once after it. For each dir it takes the key's lock (by the
// key's hash, which names the dir, so no commit of that key is in flight),
// finds the key through the index's 'h' entry and the record through the
// key, and removes every data dir the record does not name, except those
// waiting in the reaper for their grace period. A dir with no 'h' entry
// never backed a durable record and goes whole. Close stops the sweep
// between two dirs; the next Open's sweep starts over.

// sweeper runs the sweep once; Close stops it.
type sweeper struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func newSweeper() *sweeper {
	return &sweeper{stop: make(chan struct{}), done: make(chan struct{})}
}

func (s *Store) stopSweep() {
	s.sweep.once.Do(func() { close(s.sweep.stop) })
	<-s.sweep.done
}

func (s *Store) stopped() bool {
	select {
	case <-s.sweep.stop:
		return true
	default:
		return false
	}
}

// sweepChunk is how many entries of an object fan dir the sweep reads
// at a time: a fan dir holds 1/256 of a bucket's object dirs, too many at
// a hundred million objects to list in one go.
const sweepChunk = 1024

// runSweep walks every bucket's object dirs once, until done or Close.
func (s *Store) runSweep() {
	defer close(s.sweep.done)
	buckets, err := os.ReadDir(s.bucketsDir)
	if err != nil {
		s.log.Warn().Err(err).Msg("sweep: listing buckets")
		return
	}
	n := 0
	for _, b := range buckets {
		if !b.IsDir() || !ValidBucket(b.Name()) {
			continue
		}
		root := filepath.Join(s.bucketDir(b.Name()), "obj")
		fans, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, fan := range fans {
			m, ok := s.sweepFan(b.Name(), filepath.Join(root, fan.Name()))
			n += m
			if !ok {
				return
			}
		}
	}
	if n > 0 {
		s.log.Info().Int("removed", n).Msg("sweep removed data no record names")
	}
}

// sweepFan sweeps the object dirs in one fan dir, reading it a chunk at a
// time, and returns how many entries it removed and false once Close
// stopped it.
func (s *Store) sweepFan(bucket, fan string) (int, bool) {
	f, err := os.Open(fan)
	if err != nil {
		return 0, true
	}
	defer f.Close()
	n := 0
	for {
		objs, err := f.ReadDir(sweepChunk)
		for _, o := range objs {
			if s.stopped() {
				return n, false
			}
			n += s.sweepObject(bucket, filepath.Join(fan, o.Name()), o.Name())
		}
		if err != nil { // io.EOF at the end
			return n, true
		}
	}
}

// sweepObject removes what no record names in the object dir of the key
// hashing to h and returns how many entries it removed.
func (s *Store) sweepObject(bucket, dir, h string) int {
	if len(h) != 64 {
		return 0
	}
	unlock := s.lockHash(bucket, h)
	defer unlock()
	key, err := s.get(hashKey(bucket, h))
	if err != nil {
		return 0
	}
	keep, k := map[string]bool{}, string(key)
	if key != nil {
		v, cur, err := s.readHead(bucket, k)
		switch {
		case err == nil && hasData(cur):
			keep[dataDirName(cur.Stamp)] = true
		case err != nil && !errors.Is(err, meta.ErrNotFound):
			return 0 // damaged or unreadable: what it names is unknown
		}
		kept := s.keptDirs(bucket, k, v)
		if kept == nil {
			return 0
		}
		for d := range kept {
			keep[d] = true
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if keep[e.Name()] || (key != nil && s.retiring(bucket, k, e.Name())) {
			continue
		}
		// Data dirs, and record files of the old layout left behind by
		// a migration whose removal was not durable.
		if !e.IsDir() && e.Name() != "meta" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			s.log.Warn().Err(err).Str("path", dir).Msg("sweep: removing unreferenced data")
			continue
		}
		n++
	}
	if len(keep) == 0 {
		os.Remove(dir) // fails, harmlessly, while retired dirs remain
	}
	return n
}

// retiring reports whether the data dir name of bucket/key waits in the
// reaper for its grace period to end.
func (s *Store) retiring(bucket, key, name string) bool {
	r := s.reaper
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.queue {
		if d.bucket == bucket && d.key == key && d.name == name {
			return true
		}
	}
	return false
}
