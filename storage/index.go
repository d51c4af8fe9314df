package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// Listing limits: a non-positive limit means DefaultListLimit, and no call
// returns more than MaxListLimit entries.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 10000
)

// readRecord returns the generation and the current record of a key:
// meta.ErrNotFound when there is none, an error wrapping meta.ErrCorrupt
// when it is damaged.
func (s *Store) readRecord(bucket, key string) (uint64, *meta.Object, error) {
	v, o, err := s.readHead(bucket, key)
	if err != nil {
		return 0, nil, err
	}
	return recordGen(v), o, nil
}

// readHead returns the key's 'o' value and its record decoded: the value
// and an error wrapping meta.ErrCorrupt when the record is damaged, a nil
// value and meta.ErrNotFound when there is none.
func (s *Store) readHead(bucket, key string) ([]byte, *meta.Object, error) {
	v, err := s.get(objKey(bucket, key))
	if err != nil {
		return nil, nil, fmt.Errorf("read meta %s/%s: %w", bucket, key, err)
	}
	if v == nil {
		return nil, nil, fmt.Errorf("read meta %s/%s: %w", bucket, key, meta.ErrNotFound)
	}
	_, o, err := decodeRecord(bucket, key, v)
	if err != nil {
		return v, nil, fmt.Errorf("read meta %s/%s: %w", bucket, key, err)
	}
	return v, o, nil
}

// listLimit applies the listing limits to a caller's limit.
func listLimit(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return min(limit, MaxListLimit)
}

// list returns up to limit entries with key > after and the prefix, in key
// order, tombstones included, iterating the index from the first possible
// key. Damaged records are logged and left out: a corrupt copy is a
// missing copy.
func (s *Store) list(bucket, prefix, after string, limit int) ([]meta.Entry, error) {
	return s.listWith(bucket, prefix, after, limit, false)
}

// listWith is list that, with damaged, also returns each damaged record
// as an Entry holding only its key.
func (s *Store) listWith(bucket, prefix, after string, limit int, damaged bool) ([]meta.Entry, error) {
	c, err := s.openCursor(bucket, prefix, damaged)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return c.scan(after, limit)
}

// cursor reads one bucket's records under one prefix in key order through
// one index iterator, which every scan seeks: a folding listing seeks
// once per common prefix rather than opening an iterator for each.
type cursor struct {
	s       *Store
	bucket  string
	prefix  string
	damaged bool
	it      *pebble.Iterator
}

func (s *Store) openCursor(bucket, prefix string, damaged bool) (*cursor, error) {
	lower := escKey(bucketPrefix(pfxObject, bucket), prefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", bucket, err)
	}
	return &cursor{s: s, bucket: bucket, prefix: prefix, damaged: damaged, it: it}, nil
}

func (c *cursor) close() { c.it.Close() }

// scan returns up to limit entries with key > after, tombstones included.
// Damaged records are logged and left out, or with c.damaged returned as
// an Entry holding only their key.
func (c *cursor) scan(after string, limit int) ([]meta.Entry, error) {
	limit = listLimit(limit)
	bp := bucketPrefix(pfxObject, c.bucket)
	var ok bool
	if after >= c.prefix {
		// The first key above after: after's own entry and its versions
		// sort just below after+0x00 (escaped 0x00 0xff).
		ok = c.it.SeekGE(append(escKey(bucketPrefix(pfxObject, c.bucket), after), 0, 0xff))
	} else {
		ok = c.it.First()
	}
	out := make([]meta.Entry, 0, min(limit, 64))
	for ; ok && len(out) < limit; ok = c.it.Next() {
		key, ok := decodeObjKey(bp, c.it.Key())
		if !ok {
			continue
		}
		v, err := c.it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", c.bucket, err)
		}
		e, err := decodeEntry(c.bucket, key, v)
		switch {
		case err != nil && c.damaged:
			out = append(out, meta.Entry{Key: key})
		case err != nil:
			c.s.log.Warn().Err(err).Str("bucket", c.bucket).Str("key", key).Msg("skipping damaged object record")
		default:
			e.Unsettled = valueHasKept(v)
			out = append(out, e)
		}
	}
	if err := c.it.Error(); err != nil {
		return nil, fmt.Errorf("list %s: %w", c.bucket, err)
	}
	return out, nil
}

// live returns the number of live objects in bucket as its counter holds
// it. Commits keep the counter exact except when they replace a damaged
// record, whose liveness is unknown: it then counts high, never low (see
// liveExact).
func (s *Store) live(bucket string) (int64, error) {
	v, err := s.get(countKey(bucket))
	if err != nil || v == nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("live count of %s: %w: %d bytes", bucket, meta.ErrCorrupt, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// liveExact reports whether bucket holds a live record, trusting a zero
// counter and otherwise iterating until the first live record: quick for
// a bucket that is not empty, a scan of its tombstones only when the
// counter has drifted high, which it then corrects.
func (s *Store) liveExact(bucket string) (bool, error) {
	n, err := s.live(bucket)
	if err != nil || n == 0 {
		return false, err
	}
	bp := bucketPrefix(pfxObject, bucket)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: bp, UpperBound: prefixEnd(bp)})
	if err != nil {
		return false, fmt.Errorf("scan %s: %w", bucket, err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		key, ok := decodeObjKey(bp, it.Key())
		if !ok {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, fmt.Errorf("scan %s: %w", bucket, err)
		}
		if _, o, err := decodeRecord(bucket, key, v); err == nil && !o.Deleted {
			return true, nil
		}
	}
	if err := it.Error(); err != nil {
		return false, fmt.Errorf("scan %s: %w", bucket, err)
	}
	b := s.db.NewBatch()
	b.Set(countKey(bucket), delta(0), nil)
	s.log.Warn().Str("bucket", bucket).Int64("counted", n).Msg("live count corrected to 0")
	return false, s.apply(b)
}

// liveDelta is how the live count changes when cur (nil: none or
// damaged) is replaced by next (nil: dropped).
func liveDelta(cur, next *meta.Object) int64 {
	var d int64
	if cur != nil && !cur.Deleted {
		d--
	}
	if next != nil && !next.Deleted {
		d++
	}
	return d
}

// LiveObjects is the number of live (not deleted) objects the store holds
// a copy of, across buckets: a sum of per-bucket counters, not a scan.
func (s *Store) LiveObjects() int64 {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.db == nil {
		return 0
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxCount}, UpperBound: []byte{pfxCount + 1}})
	if err != nil {
		return 0
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		if v, err := it.ValueAndErr(); err == nil && len(v) == 8 {
			n += int64(binary.BigEndian.Uint64(v))
		}
	}
	return n
}
