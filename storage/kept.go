package storage

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// Kept versions.
//
// A commit that replaces a version does not let go of it: the replaced
// record joins the key's kept list (a 'p' key, db.go) and its data dir
// stays, until the replacing version is settled, that is known to be on
// a write quorum of its peers (Settle). A gateway that dies between the
// commits of one write can leave the new version on fewer peers than it
// takes to read it, and the old one, on the other peers, on too few as
// well: with the copies kept here the old version is still whole, and
// reads fall back to it. Kept versions are read (ReadVersions, OpenShard
// by stamp) but never listed.
//
// The list holds every version replaced since the last settled one:
// usually one, for the moment between a commit and its settle. Writes cut
// short one after another, none settled, lengthen it up to MaxKept. A
// repair commit settles at once: it rewrites a version reads resolved
// as the current one.

// MaxKept bounds a key's kept list; beyond it the oldest version goes.
const MaxKept = 4

// keptFlag marks an 'o' value whose key has a kept list, so that a read
// of one of the many keys without one costs one index get.
const keptFlag = uint64(1) << 63

func keptKey(bucket, key string) []byte {
	b := bucketPrefix(pfxKept, bucket)
	return append(escKey(b, key), keyEnd...)
}

// valueHasKept reports whether an 'o' value carries keptFlag.
func valueHasKept(v []byte) bool {
	return len(v) >= 8 && binary.BigEndian.Uint64(v)&keptFlag != 0
}

// withKeptFlag returns a copy of the 'o' value v with keptFlag set or
// cleared, its generation and record unchanged.
func withKeptFlag(v []byte, kept bool) []byte {
	out := append([]byte(nil), v...)
	gen := binary.BigEndian.Uint64(out) &^ keptFlag
	if kept {
		gen |= keptFlag
	}
	binary.BigEndian.PutUint64(out, gen)
	return out
}

// keptEntry is one kept version: its 'o' value as it was when current,
// and the record decoded.
type keptEntry struct {
	val []byte
	o   *meta.Object
}

// encodeKept frames a kept list, newest first: each entry's 'o' value
// after its length as a uvarint.
func encodeKept(es []keptEntry) []byte {
	var out []byte
	for _, e := range es {
		out = binary.AppendUvarint(out, uint64(len(e.val)))
		out = append(out, e.val...)
	}
	return out
}

// decodeKept parses a kept list of bucket/key. Damage is meta.ErrCorrupt.
func decodeKept(bucket, key string, v []byte) ([]keptEntry, error) {
	var out []keptEntry
	for len(v) > 0 {
		n, w := binary.Uvarint(v)
		if w <= 0 || n > uint64(len(v)-w) {
			return nil, fmt.Errorf("%w: kept list of %s/%s", meta.ErrCorrupt, bucket, key)
		}
		val := v[w : w+int(n)]
		_, o, err := decodeRecord(bucket, key, val)
		if err != nil {
			return nil, fmt.Errorf("kept list of %s/%s: %w", bucket, key, err)
		}
		out = append(out, keptEntry{val: val, o: o})
		v = v[w+int(n):]
	}
	return out, nil
}

// readKept returns the key's kept list, empty when it has none.
func (s *Store) readKept(bucket, key string) ([]keptEntry, error) {
	v, err := s.get(keptKey(bucket, key))
	if err != nil || v == nil {
		return nil, err
	}
	return decodeKept(bucket, key, v)
}

// keptDirs returns the data dir names the kept versions of bucket/key
// hold, given the key's 'o' value v (nil: none).
func (s *Store) keptDirs(bucket, key string, v []byte) map[string]bool {
	dirs := map[string]bool{}
	if !valueHasKept(v) {
		return dirs
	}
	es, err := s.readKept(bucket, key)
	if err != nil {
		// Unknown: keep every dir the sweep or reaper asks about.
		s.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).Msg("reading kept versions")
		return nil
	}
	for _, e := range es {
		if hasData(e.o) {
			dirs[dataDirName(e.o.Stamp)] = true
		}
	}
	return dirs
}

// ReadVersions returns the key's current record, then the versions its
// commits kept (see Kept versions above), newest first, tombstones
// included and Inline filled. It fails as ReadMeta does; a damaged kept
// list is logged and left out (its versions count as missing copies).
func (s *Store) ReadVersions(ctx context.Context, bucket, key string) ([]*meta.Object, error) {
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, err
	}
	v, cur, err := s.readHead(bucket, key)
	if err != nil || !valueHasKept(v) {
		if err != nil {
			return nil, err
		}
		return []*meta.Object{cur}, nil
	}
	// The record and its list are two index entries: read them under the
	// key lock so that no commit lands in between.
	unlock := s.lockKey(bucket, key)
	defer unlock()
	if _, cur, err = s.readHead(bucket, key); err != nil {
		return nil, err
	}
	out := []*meta.Object{cur}
	es, err := s.readKept(bucket, key)
	if err != nil {
		s.log.Warn().Err(err).Str("bucket", bucket).Str("key", key).Msg("skipping damaged kept versions")
	}
	for _, e := range es {
		out = append(out, e.o)
	}
	return out, nil
}

// Settle tells the peer that version st of the key is on a write quorum of
// its peers, so the versions older than st that its commits kept are no
// longer needed: they go, their data dirs retired. A peer whose record is
// older than st, or that keeps nothing older, changes nothing. A settle is
// not synced: one lost in a crash only keeps old data longer.
func (s *Store) Settle(ctx context.Context, bucket, key string, st meta.Stamp) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if err := checkBucketKey(bucket, key); err != nil {
		return err
	}
	if !validStamp(st) {
		return invalid("settle stamp %+v", st)
	}
	unlock := s.lockKey(bucket, key)
	defer unlock()
	v, cur, err := s.readHead(bucket, key)
	if err != nil || !valueHasKept(v) || cur.Stamp.Less(st) {
		return nil // nothing to settle, or a damaged record repair replaces
	}
	es, err := s.readKept(bucket, key)
	if err != nil {
		return fmt.Errorf("settle %s/%s: %w", bucket, key, err)
	}
	var keep, drop []keptEntry
	for _, e := range es {
		if e.o.Stamp.Less(st) {
			drop = append(drop, e)
		} else {
			keep = append(keep, e)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	if len(keep) == 0 {
		b.Delete(keptKey(bucket, key), nil)
		b.Set(objKey(bucket, key), withKeptFlag(v, false), nil)
	} else {
		b.Set(keptKey(bucket, key), encodeKept(keep), nil)
	}
	if err := s.applyWith(b, pebble.NoSync); err != nil {
		return fmt.Errorf("settle %s/%s: %w", bucket, key, err)
	}
	s.retireKept(bucket, key, cur, drop)
	return nil
}

// retireKept retires the data dirs of dropped kept versions, except one
// the current record cur (nil: none) names.
func (s *Store) retireKept(bucket, key string, cur *meta.Object, drop []keptEntry) {
	for _, e := range drop {
		if !hasData(e.o) || (cur != nil && hasData(cur) && cur.Stamp == e.o.Stamp) {
			continue
		}
		s.retire(bucket, key, dataDirName(e.o.Stamp))
	}
}

// keepPlan is how a commit of o changes the key's kept list.
type keepPlan struct {
	list []keptEntry // the list after the commit, newest first
	had  bool        // the key had a list before (it must go if list is empty)
	drop []keptEntry // versions leaving the list (their dirs to retire)
}

// planKeep works out the kept list after o replaces the current record
// cur, whose 'o' value is curVal (nil when the key has none; cur is nil
// then, or when the record is damaged). A plain commit keeps cur in front
// of the list; a repair (settled) keeps nothing; a list beyond MaxKept
// loses its oldest.
func (s *Store) planKeep(o, cur *meta.Object, curVal []byte, settled bool) (keepPlan, error) {
	var p keepPlan
	var old []keptEntry
	if curVal != nil && (cur == nil || valueHasKept(curVal)) {
		es, err := s.readKept(o.Bucket, o.Key)
		if err != nil {
			return p, err
		}
		old, p.had = es, len(es) > 0
	}
	if cur != nil && cur.Stamp != o.Stamp {
		p.list = append(p.list, keptEntry{val: curVal, o: cur})
	}
	p.list = append(p.list, old...)
	switch {
	case settled:
		p.list, p.drop = nil, p.list
	case len(p.list) > MaxKept:
		p.list, p.drop = p.list[:MaxKept], p.list[MaxKept:]
		s.log.Warn().Str("bucket", o.Bucket).Str("key", o.Key).Int("kept", MaxKept).
			Msg("dropping the oldest kept version: versions replaced in a row, none settled")
	}
	return p, nil
}

// stage adds the plan's list to b.
func (p keepPlan) stage(b *pebble.Batch, bucket, key string) {
	switch {
	case len(p.list) > 0:
		b.Set(keptKey(bucket, key), encodeKept(p.list), nil)
	case p.had:
		b.Delete(keptKey(bucket, key), nil)
	}
}
