package storage

import (
	"errors"
	"testing"
	"time"

	"tessera/meta"
)

func TestBucketConfigNewestWins(t *testing.T) {
	s := newStore(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.GetBucketConfig(ctx, "bkt", "cors"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("get before put: %v, want ErrNotFound", err)
	}
	steps := []struct {
		at   time.Time
		data string
		want string
	}{
		{t0, "one", "one"},
		{t0.Add(time.Second), "two", "two"},
		{t0, "stale", "two"},              // older write arriving late is ignored
		{t0.Add(2 * time.Second), "", ""}, // delete marker
		{t0.Add(time.Second), "late", ""},
	}
	for i, st := range steps {
		c := meta.BucketConfig{Bucket: "bkt", Name: "cors", Updated: st.at, Data: []byte(st.data)}
		if err := s.PutBucketConfig(ctx, c); err != nil {
			t.Fatalf("step %d: put: %v", i, err)
		}
		got, err := s.GetBucketConfig(ctx, "bkt", "cors")
		if err != nil {
			t.Fatalf("step %d: get: %v", i, err)
		}
		if string(got.Data) != st.want {
			t.Fatalf("step %d: data %q, want %q", i, got.Data, st.want)
		}
	}
	s = reopen(t, s)
	if got, err := s.GetBucketConfig(ctx, "bkt", "cors"); err != nil || len(got.Data) != 0 {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}

func TestBucketConfigErrors(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	cases := []struct {
		name string
		c    meta.BucketConfig
		want error
	}{
		{"no bucket", meta.BucketConfig{Bucket: "nope", Name: "cors", Updated: now}, meta.ErrBucketNotFound},
		{"bad name", meta.BucketConfig{Bucket: "bkt", Name: "../x", Updated: now}, ErrInvalidArgument},
		{"too big", meta.BucketConfig{Bucket: "bkt", Name: "cors", Updated: now, Data: make([]byte, maxBucketConfig+1)}, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.PutBucketConfig(ctx, tc.c); !errors.Is(err, tc.want) {
				t.Fatalf("put: %v, want %v", err, tc.want)
			}
		})
	}
	// The config goes with the bucket.
	if err := s.PutBucketConfig(ctx, meta.BucketConfig{Bucket: "bkt", Name: "cors", Updated: now, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	mustMakeBucket(t, s, "bkt")
	if _, err := s.GetBucketConfig(ctx, "bkt", "cors"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("get after bucket re-create: %v, want ErrNotFound", err)
	}
}
