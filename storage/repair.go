package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/rs/zerolog"

	"tessera/meta"
)

// RepairCommit is Commit for repair: it also accepts a record whose stamp
// equals the current one, rewriting this peer's copy of that version (a
// shard file lost or failing its checksums) with freshly rebuilt data. A
// newer current record still wins (meta.ErrStale, nothing changes), so a
// repair racing an overwrite can never bring the old version back.
func (s *Store) RepairCommit(ctx context.Context, o *meta.Object, staged []string) error {
	return s.commitStaged(ctx, "repair commit", o, staged, true)
}

// ShardFile is one part file of a stored version, as Inspect reports it.
type ShardFile struct {
	Part int
	Size int64 // -1 when the file is missing
}

// Inspect reads the record a peer directory holds for bucket/key and the
// sizes of its part files, without opening a Store there: tools and tests
// use it to check redundancy from outside. It only reads, so it is safe
// on the directory of a running peer: a Store open on dir in this process
// answers itself; otherwise the index is opened read-only, or, when
// another process holds it, a copy of it is (inspectCopy). A missing
// record is meta.ErrNotFound.
func Inspect(dir, bucket, key string) (*meta.Object, []ShardFile, error) {
	if err := checkBucketKey(bucket, key); err != nil {
		return nil, nil, err
	}
	o, err := inspectRecord(dir, bucket, key)
	if err != nil {
		return nil, nil, fmt.Errorf("inspect %s/%s: %w", bucket, key, err)
	}
	return o, shardFiles(dir, bucket, key, o), nil
}

// Inspection is what InspectKeys finds for one key: its record and part
// files as Inspect reports them, Object nil where the peer holds no record.
type Inspection struct {
	Object *meta.Object
	Files  []ShardFile
}

// InspectKeys is Inspect for many keys of one bucket, reading the index
// once: the copy of a running peer's index that Inspect may have to make
// costs what the index holds, so checking thousands of keys one Inspect at
// a time copied it thousands of times.
func InspectKeys(dir, bucket string, keys []string) (map[string]Inspection, error) {
	for _, key := range keys {
		if err := checkBucketKey(bucket, key); err != nil {
			return nil, err
		}
	}
	out := make(map[string]Inspection, len(keys))
	err := readIndex(dir, func(r pebble.Reader) error {
		for _, key := range keys {
			o, err := readRecordIn(r, bucket, key)
			if errors.Is(err, meta.ErrNotFound) {
				out[key] = Inspection{}
				continue
			}
			if err != nil {
				return fmt.Errorf("inspect %s/%s: %w", bucket, key, err)
			}
			out[key] = Inspection{Object: o, Files: shardFiles(dir, bucket, key, o)}
		}
		return nil
	})
	if !errors.Is(err, errNoIndex) {
		return out, err
	}
	for _, key := range keys { // the old layout: a record file per key
		o, files, err := Inspect(dir, bucket, key)
		if errors.Is(err, meta.ErrNotFound) {
			out[key] = Inspection{}
			continue
		}
		if err != nil {
			return nil, err
		}
		out[key] = Inspection{Object: o, Files: files}
	}
	return out, nil
}

// shardFiles reports the sizes of the part files of o, the record of
// bucket/key in the store in dir; nil for a version without shard files.
func shardFiles(dir, bucket, key string, o *meta.Object) []ShardFile {
	if !hasData(o) {
		return nil
	}
	h := keyHash(key)
	objDir := filepath.Join(dir, "buckets", bucket, "obj", h[:2], h)
	files := make([]ShardFile, 0, len(o.Parts))
	for _, p := range o.Parts {
		f := ShardFile{Part: p.Number, Size: -1}
		if fi, err := os.Stat(filepath.Join(objDir, dataDirName(o.Stamp), partFileName(p.Number))); err == nil {
			f.Size = fi.Size()
		}
		files = append(files, f)
	}
	return files
}

// open maps the absolute dirs of the Stores open in this process to them.
var openStores = struct {
	sync.Mutex
	m map[string]*Store
}{m: map[string]*Store{}}

// openStore returns the Store open on the absolute dir in this process,
// or nil.
func openStore(abs string) *Store {
	openStores.Lock()
	defer openStores.Unlock()
	return openStores.m[abs]
}

func inspectRecord(dir, bucket, key string) (*meta.Object, error) {
	var o *meta.Object
	err := readIndex(dir, func(r pebble.Reader) error {
		var err error
		o, err = readRecordIn(r, bucket, key)
		return err
	})
	if errors.Is(err, errNoIndex) {
		return inspectOldLayout(dir, bucket, key)
	}
	return o, err
}

// errNoIndex reports a store directory without an index: a store of the
// old layout not yet opened by this release.
var errNoIndex = errors.New("no index")

// readIndex runs fn on the index of the store in dir: the index of a Store
// open on dir in this process, else a copy of it. It never opens another
// process's index in place, even one that looks unused: pebble would
// take the index's lock for as long as fn runs, and a peer starting on
// dir meanwhile would fail to open its store.
func readIndex(dir string, fn func(pebble.Reader) error) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if s := openStore(abs); s != nil {
		s.dbmu.RLock()
		db := s.db
		if db != nil {
			defer s.dbmu.RUnlock()
			return fn(db)
		}
		s.dbmu.RUnlock()
	}
	idx := indexDir(abs)
	if _, err := os.Stat(idx); isNotExist(err) {
		return errNoIndex
	}
	return readCopy(idx, fn)
}

// CountRecords returns how many object records (tombstones and damaged
// ones included) the store in dir holds, read as Inspect reads; a store
// of the old layout counts its record files. Tests use it to watch
// records being collected.
func CountRecords(dir string) (int, error) {
	n := 0
	err := readIndex(dir, func(r pebble.Reader) error {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxObject}, UpperBound: []byte{pfxObject + 1}})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return errors.Join(it.Error(), it.Close())
	})
	if errors.Is(err, errNoIndex) {
		err = filepath.WalkDir(filepath.Join(dir, "buckets"), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "meta" {
				n++
			}
			return nil
		})
	}
	return n, err
}

// readCopy runs fn on a copy of the index at idx, which another process
// may hold open: its immutable tables are linked, the rest copied, and the
// copy opened as pebble opens after a crash.
func readCopy(idx string, fn func(pebble.Reader) error) error {
	tmp, err := os.MkdirTemp("", "tessera-inspect-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ents, err := os.ReadDir(idx)
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := filepath.Join(idx, e.Name()), filepath.Join(tmp, e.Name())
		if e.Name() == "LOCK" || !e.Type().IsRegular() {
			continue
		}
		if strings.HasSuffix(e.Name(), ".sst") && os.Link(src, dst) == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if isNotExist(err) {
			continue // removed by a compaction meanwhile
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	db, err := pebble.Open(tmp, &pebble.Options{ReadOnly: true, Merger: counter, Logger: pebbleLogger{zerolog.Nop()}})
	if err != nil {
		return fmt.Errorf("open a copy of %s: %w", idx, err)
	}
	defer db.Close()
	return fn(db)
}

func readRecordIn(db pebble.Reader, bucket, key string) (*meta.Object, error) {
	v, c, err := db.Get(objKey(bucket, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, meta.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_, o, err := decodeRecord(bucket, key, v)
	return o, err
}

// inspectOldLayout reads a record of a store not yet migrated.
func inspectOldLayout(dir, bucket, key string) (*meta.Object, error) {
	h := keyHash(key)
	o, err := readObjectFile(bucket, filepath.Join(dir, "buckets", bucket, "obj", h[:2], h, "meta"))
	if isNotExist(err) {
		return nil, meta.ErrNotFound
	}
	if err == nil && o.Key != key {
		return nil, fmt.Errorf("%w: record holds another key", meta.ErrCorrupt)
	}
	return o, err
}
