package storage

import (
	"errors"
	"fmt"
	"time"
)

// fullHold is how long a store counts as full after a write ran out of
// space, unless free space has since grown by a Reserve: a quota (EDQUOT)
// or reserved blocks can refuse writes while free bytes look plentiful,
// and a staged file that failed is removed at once, which would read as
// room again without any being freed.
const fullHold = 10 * time.Second

// Reserve is the free space below which a store takes no new shard data.
// It is kept for metadata records, tombstones above all: deleting objects
// must still work on a full disk, since that is how space comes back. 1%
// of the filesystem, between 4 MiB and 1 GiB.
func Reserve(capacity uint64) uint64 {
	return min(max(capacity/100, 4<<20), 1<<30)
}

// Space is a store's disk as readiness, gossip and the status page report
// it.
type Space struct {
	Capacity, Free uint64
	// Full: free space is below Reserve, or a write ran out of space in
	// the last fullHold. A full store refuses new shards with ErrDiskFull
	// and is not ready.
	Full bool
}

// Space reports the filesystem's capacity, free bytes and whether the
// store counts as full.
func (s *Store) Space() (Space, error) {
	capacity, free, err := s.Stat()
	if err != nil {
		return Space{}, err
	}
	sp := Space{Capacity: capacity, Free: free, Full: free < Reserve(capacity)}
	if at := s.fullAt.Load(); at != 0 && time.Since(time.Unix(0, at)) < fullHold && free < s.fullFree.Load()+Reserve(capacity) {
		sp.Full = true
	}
	return sp, nil
}

// errRefused marks the ErrDiskFull of a shard refused because the store
// already counts as full: it is no news about the disk.
var errRefused = errors.New("refused while full")

// NoteError records err if a write ran out of space (ErrDiskFull), so the
// store counts as full for fullHold (see Space). Callers pass every write
// error they see; the shard API server does. Refusals the store made
// itself because it was full are not recorded: they would keep it full
// for good, however much space came back. It returns err.
func (s *Store) NoteError(err error) error {
	if errors.Is(err, ErrDiskFull) && !errors.Is(err, errRefused) {
		_, free, serr := s.Stat()
		if serr != nil {
			free = 0
		}
		s.fullFree.Store(free)
		s.fullAt.Store(time.Now().UnixNano())
	}
	return err
}

// refuseWhenFull is ErrDiskFull when the store counts as full, so a shard
// that would not fit is refused before its bytes travel. Replaced data
// still in its grace period goes first: a write is not refused for the
// space of versions nothing reads any more.
func (s *Store) refuseWhenFull() error {
	sp, err := s.Space()
	if err == nil && sp.Full && s.retiredCount() > 0 {
		s.reapAll()
		sp, err = s.Space()
	}
	if err != nil || !sp.Full {
		return nil // a failing statfs says nothing about space; the write will tell
	}
	return fmt.Errorf("%w (%w): %d bytes free of %d, reserve %d", ErrDiskFull, errRefused, sp.Free, sp.Capacity, Reserve(sp.Capacity))
}

// underPressure reports whether free space is short enough that replaced
// data should not wait out its grace period: below four reserves or 5 %
// of the filesystem, whichever is more. A sustained overwrite load keeps
// its rate times the grace period of replaced versions on disk (300 MB/s
// of 16 MiB overwrites held 16 GB for two minutes), which must not fill
// the disk.
func (s *Store) underPressure() bool {
	capacity, free, err := s.Stat()
	return err == nil && free < max(4*Reserve(capacity), capacity/20)
}
