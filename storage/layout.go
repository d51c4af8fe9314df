package storage

import (
	"errors"
	"os"
	"path/filepath"

	"tessera/meta"
)

// Migration from the layout of one record file per object.
//
// Stores written before the index kept each object's record in
// buckets/<b>/obj/<h[:2]>/<h>/meta. The first Open that finds no
// migration marker in the index walks those files and moves each record
// into the index: a synced batch of up to migrateBatch records, and only
// then the removal of their files. A crash at any point leaves every
// record in a file, in the index or (between the two steps) in both,
// where the next Open's migration writes the same record again; no commit
// runs before the migration is done, so the index never holds anything
// newer than a file. When every file is gone, a synced marker key makes
// later Opens skip the walk. Data dirs stay where they are: the layout of
// shard files did not change.

// markerMigrated names the marker of a finished migration.
const markerMigrated = "layout-index-v1"

// migrateBatch is how many records go in one synced index batch.
const migrateBatch = 1000

// migrateLayout moves old-layout records into the index, unless the
// marker says it was done, and returns how many it moved.
func (s *Store) migrateLayout() (int, error) {
	done, err := s.get(markerKey(markerMigrated))
	if err != nil || done != nil {
		return 0, err
	}
	buckets, err := os.ReadDir(s.bucketsDir)
	if err != nil {
		return 0, ioErr("migrate: list buckets", err)
	}
	m := &migration{s: s, total: countRecordDirs(s.bucketsDir)}
	if m.total > 0 {
		s.log.Info().Int("record_dirs", m.total).Msg("moving object records into the index")
		var done func()
		m.moved, done = startUpgrade(s.dir, m.total)
		defer done()
	}
	for _, b := range buckets {
		if !b.IsDir() || !ValidBucket(b.Name()) {
			continue
		}
		if err := m.bucket(b.Name()); err != nil {
			return m.n, err
		}
	}
	if err := m.flush(); err != nil {
		return m.n, err
	}
	b := s.db.NewBatch()
	b.Set(markerKey(markerMigrated), []byte{1}, nil)
	if err := s.apply(b); err != nil {
		return m.n, err
	}
	if m.n > 0 {
		s.log.Info().Int("records", m.n).Msg("migrated object records into the index")
	}
	return m.n, nil
}

// migration is one run of migrateLayout: the records read but not yet
// in the index, and the files to remove once they are.
type migration struct {
	s       *Store
	pending []*meta.Object
	files   []string
	n       int
	total   int       // record dirs found at the start
	moved   func(int) // publishes n (startUpgrade); nil when total is 0
}

func (m *migration) bucket(bucket string) error {
	root := filepath.Join(m.s.bucketDir(bucket), "obj")
	fans, err := os.ReadDir(root)
	if err != nil {
		return nil // no objects, or garbage the calls will report
	}
	for _, fan := range fans {
		objs, err := os.ReadDir(filepath.Join(root, fan.Name()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			if err := m.object(bucket, filepath.Join(root, fan.Name(), o.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// object queues the record file in dir. A damaged record is a missing
// copy, as it was before the migration: it is logged and removed.
func (m *migration) object(bucket, dir string) error {
	path := filepath.Join(dir, "meta")
	o, err := readObjectFile(bucket, path)
	if isNotExist(err) {
		return nil // no record: the sweep collects the dir
	}
	if err == nil {
		if h := keyHash(o.Key); filepath.Base(dir) != h || filepath.Base(filepath.Dir(dir)) != h[:2] {
			err = errors.New("record stored under the wrong hash")
		}
	}
	if err != nil {
		m.s.log.Warn().Err(err).Str("path", path).Msg("migrate: dropping damaged object record")
		os.Remove(path)
		return nil
	}
	m.pending = append(m.pending, o)
	m.files = append(m.files, path)
	if len(m.pending) >= migrateBatch {
		return m.flush()
	}
	return nil
}

// flush writes the pending records in one synced batch, then removes
// their files.
func (m *migration) flush() error {
	if len(m.pending) == 0 {
		return nil
	}
	s := m.s
	b := s.db.NewBatch()
	for _, o := range m.pending {
		rec, err := meta.MarshalObject(o)
		if err != nil {
			b.Close()
			return err
		}
		// A record the index holds already was moved by a run that
		// stopped before removing its file: the count must not see it
		// twice.
		_, cur, _ := s.readRecord(o.Bucket, o.Key)
		b.Set(objKey(o.Bucket, o.Key), encodeRecord(s.gen.Add(1), false, rec), nil)
		if hasData(o) {
			b.Set(hashKey(o.Bucket, keyHash(o.Key)), []byte(o.Key), nil)
		}
		if d := liveDelta(cur, o); d != 0 {
			b.Merge(countKey(o.Bucket), delta(d), nil)
		}
	}
	if err := s.apply(b); err != nil {
		return err
	}
	for _, f := range m.files {
		if err := os.Remove(f); err != nil && !isNotExist(err) {
			s.log.Warn().Err(err).Str("path", f).Msg("migrate: removing moved record")
		}
	}
	m.n += len(m.pending)
	if m.moved != nil {
		m.moved(m.n)
	}
	if s.afterMigrateBatch != nil {
		s.afterMigrateBatch()
	}
	if m.n/migrateBatch%10 == 0 {
		s.log.Info().Int("records", m.n).Int("of", m.total).Msg("migrating object records into the index")
	}
	m.pending, m.files = m.pending[:0], m.files[:0]
	return nil
}
