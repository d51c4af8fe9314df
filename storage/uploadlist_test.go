package storage

import (
	"errors"
	"testing"

	"tessera/meta"
)

func TestListUploads(t *testing.T) {
	s := newStore(t)
	ups, err := s.ListUploads(ctx, "bkt", "")
	if err != nil || len(ups) != 0 {
		t.Fatalf("empty bucket: %v %v", ups, err)
	}
	newUpload(t, s, "b/key", "up-2")
	newUpload(t, s, "a/key", "up-1")
	newUpload(t, s, "b/key", "up-3")
	commitPart(t, s, "b/key", "up-3", 1, "one")
	newUpload(t, s, "c", "up-4")
	if err := s.AbortUpload(ctx, "bkt", "c", "up-4"); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	ups, err = s.ListUploads(ctx, "bkt", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range ups {
		if len(u.Parts) != 0 {
			t.Errorf("upload %s listed with parts", u.UploadID)
		}
		got = append(got, u.Key+"/"+u.UploadID)
	}
	want := []string{"a/key/up-1", "b/key/up-2", "b/key/up-3"}
	if len(got) != len(want) || got[0] != want[0] || (got[1] != want[1] && got[1] != want[2]) {
		t.Fatalf("uploads %v, want %v (b/key ones in initiation order)", got, want)
	}
	ups, err = s.ListUploads(ctx, "bkt", "b/")
	if err != nil || len(ups) != 2 {
		t.Fatalf("prefix b/: %v %v", ups, err)
	}
	if _, err := s.ListUploads(ctx, "nobucket", ""); !errors.Is(err, meta.ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := s.ListUploads(ctx, "Bad_Name", ""); err == nil {
		t.Fatal("invalid bucket name accepted")
	}
}
