package storage

import (
	"fmt"
	"path/filepath"

	"tessera/meta"
)

// DamageRecord flips one bit of the key's record as the index holds it,
// at byte at(n) of its n-byte encoding (meta.MarshalObject's), as bit rot
// in a record file used to: the record then reads as meta.ErrCorrupt.
// It is for fault tests of the layers above the store, which can no
// longer reach a record through the filesystem. The caller must not
// write the key meanwhile.
func (s *Store) DamageRecord(bucket, key string, at func(n int) int) error {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.db == nil {
		return ErrClosed
	}
	v, err := s.get(objKey(bucket, key))
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("damage %s/%s: %w", bucket, key, meta.ErrNotFound)
	}
	i := 8 + at(len(v)-8)
	if i < 8 || i >= len(v) {
		return fmt.Errorf("damage %s/%s: byte %d of %d", bucket, key, i-8, len(v)-8)
	}
	v[i] ^= 0x40
	b := s.db.NewBatch()
	b.Set(objKey(bucket, key), v, nil)
	return s.apply(b)
}

// DamageRecordAt is DamageRecord on the store in dir: the Store open on
// it in this process, or else one opened for the purpose, which fails
// while another process holds the directory (stop it first).
func DamageRecordAt(dir, bucket, key string, at func(n int) int) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if s := openStore(abs); s != nil {
		return s.DamageRecord(bucket, key, at)
	}
	s, err := Open(abs, DefaultConfig())
	if err != nil {
		return err
	}
	defer s.Close()
	return s.DamageRecord(bucket, key, at)
}
