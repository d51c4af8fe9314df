package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// The tombstone index: a 'd' entry for every tombstone the store holds,
// ordered by the tombstone's stamp, so that the collector reads only the
// tombstones old enough to collect (ListTombstones) instead of walking
// every key of a bucket, live ones included: at a hundred million keys a
// peer, such a walk takes about an hour a pass.
//
//	'd' bucket 0x00 nanos(8, big endian) esc(key) 0x00 0x01   (no value)
//
// The entry is written and removed in the same batch as the record it
// stands for (putRecord, DropVersion), so it is exact, with one exception:
// a record replaced while damaged (its stamp unreadable) leaves its entry
// behind. ListTombstones checks each entry against the record and removes
// those that no longer match.

// markerTombIndex names the marker of a finished first indexing of the
// tombstones (indexTombstones), for stores made before the index had them.
const markerTombIndex = "tombstone-index-v1"

// tombIndexBatch is how many entries the first indexing writes a batch.
const tombIndexBatch = 10000

func tombPrefix(bucket string) []byte { return bucketPrefix(pfxTomb, bucket) }

func tombKey(bucket string, nanos int64, key string) []byte {
	b := binary.BigEndian.AppendUint64(tombPrefix(bucket), uint64(nanos))
	return append(escKey(b, key), keyEnd...)
}

// decodeTombKey returns the stamp nanos and the key of a 'd' key under
// prefix (tombPrefix), false for a malformed one.
func decodeTombKey(prefix, k []byte) (int64, string, bool) {
	if len(k) < len(prefix)+8 {
		return 0, "", false
	}
	nanos := int64(binary.BigEndian.Uint64(k[len(prefix):]))
	key, ok := decodeObjKey(k[:len(prefix)+8], k)
	return nanos, key, ok
}

// stageTombstone adds to b the index change of replacing record cur of a
// key by next (either nil: none).
func stageTombstone(b *pebble.Batch, bucket, key string, cur, next *meta.Object) {
	if cur != nil && cur.Deleted {
		b.Delete(tombKey(bucket, cur.Stamp.Nanos, key), nil)
	}
	if next != nil && next.Deleted {
		b.Set(tombKey(bucket, next.Stamp.Nanos, key), nil, nil)
	}
}

// ListTombstones returns up to limit of the bucket's tombstones stamped
// before before, oldest first: each entry's key, stamp and Deleted. It
// starts after the tombstone (after.Stamp.Nanos, after.Key); the zero
// Entry starts at the oldest. Fewer than limit entries means there are no
// more. The records are read as they are now, so a key written again
// since is left out.
func (s *Store) ListTombstones(ctx context.Context, bucket string, before time.Time, after meta.Entry, limit int) ([]meta.Entry, error) {
	leave, err := s.enterBucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	defer leave()
	limit = listLimit(limit)
	prefix := tombPrefix(bucket)
	lower := prefix
	if after.Stamp.Nanos > 0 {
		lower = append(tombKey(bucket, after.Stamp.Nanos, after.Key), 0)
	}
	upper := binary.BigEndian.AppendUint64(tombPrefix(bucket), uint64(max(before.UnixNano(), 0)))
	if bytes.Compare(lower, upper) >= 0 {
		return nil, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("list tombstones %s: %w", bucket, err)
	}
	defer it.Close()
	out := make([]meta.Entry, 0, min(limit, 64))
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nanos, key, ok := decodeTombKey(prefix, it.Key())
		if !ok {
			continue
		}
		e, err := s.tombstoneOf(bucket, key, nanos)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, *e)
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("list tombstones %s: %w", bucket, err)
	}
	return out, nil
}

// tombstoneOf is the key's record if it is the tombstone stamped nanos
// that its index entry stands for; nil, with the entry removed, if not.
func (s *Store) tombstoneOf(bucket, key string, nanos int64) (*meta.Entry, error) {
	if e, err := s.readTombstone(bucket, key, nanos); e != nil || err != nil {
		return e, err
	}
	// A stale entry: remove it under the key's lock, so a commit of that
	// very tombstone racing this one keeps its entry.
	unlock := s.lockKey(bucket, key)
	defer unlock()
	if e, err := s.readTombstone(bucket, key, nanos); e != nil || err != nil {
		return nil, err // no longer stale; the next pass lists it
	}
	b := s.db.NewBatch()
	b.Delete(tombKey(bucket, nanos, key), nil)
	if err := s.applyWith(b, pebble.NoSync); err != nil {
		return nil, fmt.Errorf("list tombstones %s: %w", bucket, err)
	}
	return nil, nil
}

// readTombstone is the key's record as a listing entry if it is a
// tombstone stamped nanos, else nil. A damaged record is no tombstone.
func (s *Store) readTombstone(bucket, key string, nanos int64) (*meta.Entry, error) {
	v, err := s.get(objKey(bucket, key))
	if err != nil || v == nil {
		return nil, err
	}
	e, err := decodeEntry(bucket, key, v)
	if err != nil || !e.Deleted || e.Stamp.Nanos != nanos {
		return nil, nil
	}
	return &meta.Entry{Key: e.Key, Stamp: e.Stamp, Deleted: true}, nil
}

// splitObjKey returns the bucket and key an 'o' key names.
func splitObjKey(k []byte) (string, string, bool) {
	i := bytes.IndexByte(k, 0)
	if len(k) == 0 || k[0] != pfxObject || i < 0 {
		return "", "", false
	}
	key, ok := decodeObjKey(k[:i+1], k)
	return string(k[1:i]), key, ok
}

// indexTombstones gives every tombstone record an index entry, once: on
// a store made before the index had them, the first Open walks the
// records (a crash before the synced marker repeats the walk, whose
// writes are idempotent); later Opens find the marker and read nothing.
func (s *Store) indexTombstones() (int, error) {
	done, err := s.get(markerKey(markerTombIndex))
	if err != nil || done != nil {
		return 0, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxObject}, UpperBound: []byte{pfxObject + 1}})
	if err != nil {
		return 0, fmt.Errorf("index tombstones: %w", err)
	}
	defer it.Close()
	n := 0
	b := s.db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			b.Close()
			return n, fmt.Errorf("index tombstones: %w", err)
		}
		bucket, key, ok := splitObjKey(it.Key())
		if !ok || len(v) < 8 {
			continue
		}
		e, err := decodeEntry(bucket, key, v)
		if err != nil || !e.Deleted {
			continue // damaged records are no tombstones
		}
		b.Set(tombKey(bucket, e.Stamp.Nanos, e.Key), nil, nil)
		if n++; n%tombIndexBatch == 0 {
			if err := s.applyWith(b, pebble.NoSync); err != nil {
				return n, fmt.Errorf("index tombstones: %w", err)
			}
			b = s.db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		b.Close()
		return n, fmt.Errorf("index tombstones: %w", err)
	}
	// The synced marker makes every earlier batch durable too: the WAL
	// is written in order.
	b.Set(markerKey(markerTombIndex), []byte{1}, nil)
	if err := s.apply(b); err != nil {
		return n, fmt.Errorf("index tombstones: %w", err)
	}
	return n, nil
}
