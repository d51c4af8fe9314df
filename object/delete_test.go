package object

import (
	"context"
	"errors"
	"testing"
)

func TestDeleteObjectWith(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	info := put(t, l, "k", []byte("data"))
	refuse := errors.New("condition failed")

	var seen *ObjectInfo
	err := l.DeleteObjectWith(ctx, testBucket, "k", DeleteOptions{Check: func(cur *ObjectInfo) error { seen = cur; return refuse }})
	if !errors.Is(err, refuse) {
		t.Fatalf("refused delete: %v", err)
	}
	if seen == nil || seen.ETag != info.ETag || seen.Size != 4 {
		t.Fatalf("check saw %+v, want the current version %+v", seen, info)
	}
	mustGet(t, l, "k", []byte("data"))

	if err := l.DeleteObjectWith(ctx, testBucket, "k", DeleteOptions{Check: func(*ObjectInfo) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	_, err = l.HeadObject(ctx, testBucket, "k")
	wantErr(t, err, ErrObjectNotFound)

	// A missing key is shown to the check as nil; its verdict stands.
	seen = &ObjectInfo{}
	err = l.DeleteObjectWith(ctx, testBucket, "k", DeleteOptions{Check: func(cur *ObjectInfo) error { seen = cur; return refuse }})
	if !errors.Is(err, refuse) || seen != nil {
		t.Fatalf("missing key: err %v, check saw %+v", err, seen)
	}
	err = l.DeleteObjectWith(ctx, "nobucket", "k", DeleteOptions{Check: func(*ObjectInfo) error { return nil }})
	wantErr(t, err, ErrBucketNotFound)
}
