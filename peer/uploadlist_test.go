package peer

import (
	"errors"
	"testing"

	"tessera/meta"
)

func TestClientListUploads(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "bkt")
	if ups, err := c.ListUploads(ctx, "bkt", ""); err != nil || len(ups) != 0 {
		t.Fatalf("no uploads: %v %+v", err, ups)
	}
	for _, u := range []struct{ key, id string }{{"x/2", "u2"}, {"x/1 &?", "u1"}, {"y", "u3"}} {
		if err := c.PutUpload(ctx, &meta.Upload{Bucket: "bkt", Key: u.key, UploadID: u.id, Code: meta.Code{K: 2, M: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	ups, err := c.ListUploads(ctx, "bkt", "x/")
	if err != nil || len(ups) != 2 || ups[0].Key != "x/1 &?" || ups[1].UploadID != "u2" || ups[0].Code.K != 2 {
		t.Fatalf("prefix x/: %v %+v", err, ups)
	}
	if _, err := c.ListUploads(ctx, "nobucket", ""); !errors.Is(err, meta.ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
}
