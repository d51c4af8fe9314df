package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"tessera/meta"
)

// putRaw writes records straight into the index in one unsynced batch, as
// commits of new keys would: for tests that need many records quickly.
func putRaw(t *testing.T, s *Store, objs ...*meta.Object) {
	t.Helper()
	b := s.db.NewBatch()
	defer b.Close()
	for _, o := range objs {
		rec, err := meta.MarshalObject(o)
		if err != nil {
			t.Fatal(err)
		}
		b.Set(objKey(o.Bucket, o.Key), encodeRecord(s.gen.Add(1), false, rec), nil)
		if d := liveDelta(nil, o); d != 0 {
			b.Merge(countKey(o.Bucket), delta(d), nil)
		}
	}
	if err := s.db.Apply(b, pebble.NoSync); err != nil {
		t.Fatal(err)
	}
}

// damage flips a bit of the key's record in the index.
func damage(t *testing.T, s *Store, bucket, key string, at func(n int) int) {
	t.Helper()
	if err := s.DamageRecord(bucket, key, at); err != nil {
		t.Fatal(err)
	}
}

// waitSweep waits until the sweep started by Open has walked every dir.
func waitSweep(s *Store) { <-s.sweep.done }

func TestKeyEncodingOrder(t *testing.T) {
	keys := []string{"a", "a\x00", "a\x00b", "a\x01", "a/b", "ab", "b", "日本"}
	for i := 1; i < len(keys); i++ {
		a, b := objKey("bkt", keys[i-1]), objKey("bkt", keys[i])
		if string(a) >= string(b) {
			t.Errorf("%q does not sort before %q", keys[i-1], keys[i])
		}
		got, ok := decodeObjKey(bucketPrefix(pfxObject, "bkt"), b)
		if !ok || got != keys[i] {
			t.Errorf("decode %q: %q %v", keys[i], got, ok)
		}
	}
	// A key of another bucket whose name extends this one's never
	// falls under its prefix.
	p := bucketPrefix(pfxObject, "bkt")
	if k := objKey("bkt2", "a"); string(k) >= string(p) && string(k) < string(prefixEnd(p)) {
		t.Error("bkt2 keys under the bkt prefix")
	}
}
