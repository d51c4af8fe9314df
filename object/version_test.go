package object

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"tessera/meta"
)

// A delete marker is stored under a version key as a live, empty version
// that reads and lists as a marker, beside the key's other versions.
func TestDeleteMarkerVersion(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	older, newer := l.NewVersionID(), l.NewVersionID()
	if newer >= older {
		t.Fatalf("a later version ID %s does not sort before %s", newer, older)
	}
	if _, err := l.PutObject(ctx, testBucket, meta.VersionKey("k", older), bytes.NewReader([]byte("data")), 4, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	marker := meta.VersionKey("k", newer)
	if _, err := l.PutObject(ctx, testBucket, marker, bytes.NewReader([]byte("x")), 1, PutOptions{DeleteMarker: true}); !errors.Is(err, ErrEntityTooLarge) {
		t.Fatalf("a marker with bytes: err = %v, want ErrEntityTooLarge", err)
	}
	if _, err := l.PutObject(ctx, testBucket, marker, bytes.NewReader(nil), 0, PutOptions{DeleteMarker: true}); err != nil {
		t.Fatal(err)
	}
	info, err := l.HeadObject(ctx, testBucket, marker)
	if err != nil || !info.DeleteMarker || info.Size != 0 {
		t.Fatalf("head of the marker = %+v, %v", info, err)
	}
	if info, err := l.HeadObject(ctx, testBucket, meta.VersionKey("k", older)); err != nil || info.DeleteMarker || info.Size != 4 {
		t.Fatalf("head of the older version = %+v, %v", info, err)
	}
	res, err := l.ListObjects(ctx, testBucket, ListOptions{Prefix: meta.VersionPrefix("k"), MaxKeys: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 2 || res.Objects[0].Key != marker || !res.Objects[0].DeleteMarker || res.Objects[1].DeleteMarker {
		t.Fatalf("listing of k's versions = %+v, want the marker first, then the data", res.Objects)
	}
}
