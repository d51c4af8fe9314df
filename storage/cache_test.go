package storage

import "testing"

// TestSharedIndexCache: stores sharing one cache read and write as apart,
// and the cache outlives the caller's reference for as long as a store
// uses it.
func TestSharedIndexCache(t *testing.T) {
	c := NewIndexCache(1 << 20)
	a := openWith(t, t.TempDir(), Config{Logger: DefaultConfig().Logger, Cache: c})
	b := openWith(t, t.TempDir(), Config{Logger: DefaultConfig().Logger, Cache: c})
	c.Close()
	for _, s := range []*Store{a, b} {
		mustMakeBucket(t, s, "bkt")
		commitKind(t, s, stamp(1, "w"), withInline)
	}
	a.Close()
	if o, err := b.ReadMeta(ctx, "bkt", "k"); err != nil || o.Stamp != stamp(1, "w") {
		t.Fatalf("read after the other store closed: %v %+v", err, o)
	}
}
