package peer

import (
	"errors"
	"testing"
	"time"

	"tessera/meta"
	"tessera/storage"
)

func TestClientBucketConfig(t *testing.T) {
	p := newPeer(t, nil)
	c := p.client
	mkBucket(t, c, "site")
	if _, err := c.GetBucketConfig(ctx, "site", "cors"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("get before put: %v, want ErrNotFound", err)
	}
	at := time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC)
	in := meta.BucketConfig{Bucket: "site", Name: "cors", Updated: at, Data: []byte("<CORSConfiguration/>")}
	if err := c.PutBucketConfig(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketConfig(ctx, "site", "cors")
	if err != nil || string(got.Data) != string(in.Data) || !got.Updated.Equal(at) {
		t.Fatalf("get: %v %+v", err, got)
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"missing bucket", c.PutBucketConfig(ctx, meta.BucketConfig{Bucket: "nope", Name: "cors", Updated: at}), meta.ErrBucketNotFound},
		{"bad name", c.PutBucketConfig(ctx, meta.BucketConfig{Bucket: "site", Name: "CORS", Updated: at}), storage.ErrInvalidArgument},
		{"get missing bucket", func() error { _, err := c.GetBucketConfig(ctx, "nope", "cors"); return err }(), meta.ErrBucketNotFound},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}
