package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/rs/zerolog"

	"tessera/meta"
)

// DefaultCacheSize is the index's block cache (Config.CacheSize): the
// bound on the memory the index uses for reads, whatever the object count.
const DefaultCacheSize = 32 << 20

// The index is a pebble database in DIR/index. Its keys:
//
//	'o' bucket 0x00 esc(key) 0x00 0x01   the key's current record
//	'p' bucket 0x00 esc(key) 0x00 0x01   versions the key's commits kept (kept.go)
//	'h' bucket 0x00 sha256(key)          key of a record with a data dir
//	'c' bucket                           live records in bucket (merged int64)
//	'd' bucket 0x00 nanos esc(key) 0x00 0x01   a tombstone, by age (tombindex.go)
//	'm' name                             store markers (migration done)
//
// esc doubles no byte but turns 0x00 into 0x00 0xff, so that an escaped
// key ends at the first 0x00 0x01 and keys sort in plain byte order: "a"
// before "a\x00" before "a\x01". The terminator leaves room for versions:
// a later layout appends a version suffix after it (an inverted stamp, so
// that the newest sorts first, delete markers included) and the current
// record stays the entry with no suffix; prefix scans of esc(prefix) still
// cover every version of every key under the prefix.
//
// An 'o' value is an 8-byte generation (big endian; a new one per write,
// which StatRecord reports; its top bit is keptFlag) followed by the
// meta.MarshalObject record, inline shard bytes included.
const (
	pfxObject = 'o'
	pfxHash   = 'h'
	pfxCount  = 'c'
	pfxMarker = 'm'
	pfxKept   = 'p'
	pfxTomb   = 'd'
)

var keyEnd = []byte{0, 1}

// escKey appends key to b, 0x00 escaped as 0x00 0xff.
func escKey(b []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		b = append(b, key[i])
		if key[i] == 0 {
			b = append(b, 0xff)
		}
	}
	return b
}

// bucketPrefix is the start of bucket's records.
func bucketPrefix(pfx byte, bucket string) []byte {
	b := make([]byte, 0, 2+len(bucket))
	b = append(b, pfx)
	b = append(b, bucket...)
	return append(b, 0)
}

func objKey(bucket, key string) []byte {
	b := bucketPrefix(pfxObject, bucket)
	return append(escKey(b, key), keyEnd...)
}

// hashKey names the entry mapping an object dir (by key hash) back to its
// key, which lets the sweep find the record of a dir it walks into.
func hashKey(bucket, hash string) []byte {
	return append(bucketPrefix(pfxHash, bucket), hash...)
}

func countKey(bucket string) []byte { return append([]byte{pfxCount}, bucket...) }

func markerKey(name string) []byte { return append([]byte{pfxMarker}, name...) }

// prefixEnd is the first key after every key starting with p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// decodeObjKey returns the key of an 'o' key under prefix, and false for
// a key with a version suffix or a malformed escape.
func decodeObjKey(prefix, k []byte) (string, bool) {
	rest := k[len(prefix):]
	out := make([]byte, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		if rest[i] != 0 {
			out = append(out, rest[i])
			continue
		}
		if i+1 >= len(rest) {
			return "", false
		}
		switch rest[i+1] {
		case 0xff:
			out = append(out, 0)
			i++
		case 1:
			return string(out), i+2 == len(rest)
		default:
			return "", false
		}
	}
	return "", false
}

// encodeRecord frames a record for the index; kept sets keptFlag.
func encodeRecord(gen uint64, kept bool, rec []byte) []byte {
	if kept {
		gen |= keptFlag
	}
	v := make([]byte, 8, 8+len(rec))
	binary.BigEndian.PutUint64(v, gen)
	return append(v, rec...)
}

// recordGen is the generation of an 'o' value (keptFlag masked).
func recordGen(v []byte) uint64 {
	if len(v) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v) &^ keptFlag
}

// decodeRecord verifies an 'o' value of bucket/key and returns its
// generation and record. Damage is meta.ErrCorrupt.
func decodeRecord(bucket, key string, v []byte) (uint64, *meta.Object, error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("%w: record of %d bytes", meta.ErrCorrupt, len(v))
	}
	o, err := meta.UnmarshalObject(v[8:])
	if err != nil {
		return 0, nil, err
	}
	if o.Bucket != bucket || o.Key != key || !validStamp(o.Stamp) {
		return 0, nil, fmt.Errorf("%w: record names %q/%q", meta.ErrCorrupt, o.Bucket, o.Key)
	}
	return recordGen(v), o, nil
}

// decodeEntry is decodeRecord for a listing: the record's listing line
// (meta.UnmarshalEntry), with the same checks of what it names.
func decodeEntry(bucket, key string, v []byte) (meta.Entry, error) {
	if len(v) < 8 {
		return meta.Entry{}, fmt.Errorf("%w: record of %d bytes", meta.ErrCorrupt, len(v))
	}
	b, e, err := meta.UnmarshalEntry(v[8:])
	if err != nil {
		return meta.Entry{}, err
	}
	if b != bucket || e.Key != key || !validStamp(e.Stamp) {
		return meta.Entry{}, fmt.Errorf("%w: record names %q/%q", meta.ErrCorrupt, b, e.Key)
	}
	return e, nil
}

// counter is the merge operator of the 'c' keys: values are int64 deltas
// (big endian), merged by adding, so that concurrent commits to different
// keys of a bucket update its live count without a read.
var counter = &pebble.Merger{
	Name: "tessera.counter.v1",
	Merge: func(_, value []byte) (pebble.ValueMerger, error) {
		m := &counterMerger{}
		return m, m.MergeNewer(value)
	},
}

type counterMerger struct{ n int64 }

func (m *counterMerger) MergeNewer(v []byte) error {
	if len(v) != 8 {
		return fmt.Errorf("%w: counter of %d bytes", meta.ErrCorrupt, len(v))
	}
	m.n += int64(binary.BigEndian.Uint64(v))
	return nil
}

func (m *counterMerger) MergeOlder(v []byte) error { return m.MergeNewer(v) }

func (m *counterMerger) Finish(bool) ([]byte, io.Closer, error) { return delta(m.n), nil, nil }

func delta(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// pebbleLogger routes pebble's messages into the store's log.
type pebbleLogger struct{ log zerolog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) { l.log.Debug().Msgf(format, args...) }
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Warn().Msgf(format, args...)
}

// Fatalf is called when pebble cannot go on, a failed WAL write above
// all. Pebble's own logger ends the process; one process serves several
// stores (tessera server opens six), and a full disk must not take the
// others down, so this panics with a fatalError instead, which apply
// recovers into an error that fails the store (Store.failed). Pebble
// calls it on a commit in the committer's goroutine; from a background
// goroutine the panic ends the process, as pebble's logger would.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error().Msgf(format, args...)
	fe := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok && fe.cause == nil {
			fe.cause = err
		}
	}
	panic(fe)
}

// fatalError is pebble's report that the index cannot go on.
type fatalError struct {
	msg   string
	cause error // the first error among the report's arguments
}

func (e *fatalError) Error() string { return "index failed: " + e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

// openDB opens (creating) the index in dir.
// indexDir is the index's directory in the store at dir.
func indexDir(dir string) string { return filepath.Join(dir, "index") }

func openDB(dir string, fs vfs.FS, cfg Config, log zerolog.Logger) (*pebble.DB, error) {
	size := cfg.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	opts := &pebble.Options{
		CacheSize:          size,
		Cache:              cfg.Cache.pebble(),
		Merger:             counter,
		Logger:             pebbleLogger{log.With().Str("sub", "pebble").Logger()},
		FormatMajorVersion: pebble.FormatNewest,
		FS:                 fs,
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	return db, nil
}

// get returns a copy of the value of k, nil when absent.
func (s *Store) get(k []byte) ([]byte, error) {
	v, c, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index get: %w", err)
	}
	out := bytes.Clone(v)
	c.Close()
	return out, nil
}

// apply commits b synced: when it returns nil, b is durable. Concurrent
// callers share the WAL's fsyncs (pebble groups their batches).
func (s *Store) apply(b *pebble.Batch) error { return s.applyWith(b, pebble.Sync) }

// applyWith commits b with the given write options (pebble.NoSync for a
// change a crash may lose).
func (s *Store) applyWith(b *pebble.Batch, opts *pebble.WriteOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			// The commit pipeline is broken: nothing more can be
			// written, and whether this batch was is unknown.
			s.failed.CompareAndSwap(nil, fe)
			err = ioErr("index commit", fe)
			return
		}
		b.Close()
	}()
	if err := s.db.Apply(b, opts); err != nil {
		return ioErr("index commit", err)
	}
	applied()
	return nil
}

// applied runs after each index batch became durable; crash tests
// replace it to see the disk as a crash right then would leave it.
var applied = func() {}
