package storage

import (
	"os"
	"path/filepath"

	"tessera/meta"
)

// loadIndex rebuilds the key index from disk and returns how many records
// it indexed. Open calls it before the Store is shared, which is what makes
// removing unreferenced data here safe: no commit can be in flight.
func (s *Store) loadIndex() int {
	ents, err := os.ReadDir(s.bucketsDir)
	if err != nil {
		s.log.Warn().Err(err).Msg("listing buckets for the index")
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() || !ValidBucket(e.Name()) {
			s.log.Warn().Str("name", e.Name()).Msg("ignoring stray entry in buckets dir")
			continue
		}
		n += s.loadBucket(e.Name())
	}
	return n
}

func (s *Store) loadBucket(bucket string) int {
	root := filepath.Join(s.bucketDir(bucket), "obj")
	fans, err := os.ReadDir(root)
	if err != nil {
		if !isNotExist(err) {
			s.log.Warn().Err(err).Str("bucket", bucket).Msg("listing objects for the index")
		}
		return 0
	}
	n := 0
	for _, fan := range fans {
		objs, err := os.ReadDir(filepath.Join(root, fan.Name()))
		if err != nil {
			s.log.Warn().Err(err).Str("bucket", bucket).Str("dir", fan.Name()).Msg("listing objects for the index")
			continue
		}
		for _, o := range objs {
			if s.loadObject(bucket, filepath.Join(root, fan.Name(), o.Name())) {
				n++
			}
		}
	}
	return n
}

// loadObject indexes the record in dir and removes data no record points
// at. It reports whether a record was indexed.
func (s *Store) loadObject(bucket, dir string) bool {
	log := s.log.With().Str("bucket", bucket).Str("path", dir).Logger()
	o, err := readObjectFile(bucket, filepath.Join(dir, "meta"))
	if isNotExist(err) {
		// A commit that crashed before its first record: only data, unreachable.
		if err := os.RemoveAll(dir); err != nil {
			log.Warn().Err(err).Msg("removing object dir without a record")
		}
		return false
	}
	if err != nil {
		log.Warn().Err(err).Msg("skipping damaged object record")
		return false
	}
	h := keyHash(o.Key)
	if filepath.Base(dir) != h || filepath.Base(filepath.Dir(dir)) != h[:2] {
		log.Warn().Str("key", o.Key).Msg("skipping object record stored under the wrong hash")
		return false
	}
	s.gcObjectDir(dir, o.Deleted || o.Inlined, dataDirName(o.Stamp))
	s.idx.put(bucket, meta.EntryOf(o))
	return true
}

// gcObjectDir removes data dirs other than keep (all of them when the
// record has no data): leftovers of commits that crashed before their record.
func (s *Store) gcObjectDir(dir string, noData bool, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		s.log.Warn().Err(err).Str("path", dir).Msg("listing object dir")
		return
	}
	for _, e := range ents {
		if !e.IsDir() || (!noData && e.Name() == keep) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			s.log.Warn().Err(err).Str("path", dir).Msg("removing unreferenced data dir")
		}
	}
}
