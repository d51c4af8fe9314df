package object

import (
	"context"
	"errors"
	"testing"
)

func TestDeleteObjectIf(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	info := put(t, l, "k", []byte("data"))
	refuse := errors.New("condition failed")

	var seen *ObjectInfo
	err := l.DeleteObjectIf(ctx, testBucket, "k", func(cur *ObjectInfo) error { seen = cur; return refuse })
	if !errors.Is(err, refuse) {
		t.Fatalf("refused delete: %v", err)
	}
	if seen == nil || seen.ETag != info.ETag || seen.Size != 4 {
		t.Fatalf("check saw %+v, want the current version %+v", seen, info)
	}
	mustGet(t, l, "k", []byte("data"))

	if err := l.DeleteObjectIf(ctx, testBucket, "k", func(*ObjectInfo) error { return nil }); err != nil {
		t.Fatal(err)
	}
	_, err = l.HeadObject(ctx, testBucket, "k")
	wantErr(t, err, ErrObjectNotFound)

	// A missing key is shown to the check as nil; its verdict stands.
	seen = &ObjectInfo{}
	err = l.DeleteObjectIf(ctx, testBucket, "k", func(cur *ObjectInfo) error { seen = cur; return refuse })
	if !errors.Is(err, refuse) || seen != nil {
		t.Fatalf("missing key: err %v, check saw %+v", err, seen)
	}
	err = l.DeleteObjectIf(ctx, "nobucket", "k", func(*ObjectInfo) error { return nil })
	wantErr(t, err, ErrBucketNotFound)
}
