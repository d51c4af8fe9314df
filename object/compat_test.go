package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"tessera/meta"
)

// ListUploads makes the fake peer an UploadLister.
func (p *fakePeer) ListUploads(ctx context.Context, bucket, prefix string) ([]meta.Upload, error) {
	if _, err := p.enter(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return nil, meta.ErrBucketNotFound
	}
	var out []meta.Upload
	for _, u := range p.uploads {
		if u.u.Bucket == bucket && strings.HasPrefix(u.u.Key, prefix) {
			out = append(out, u.u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func TestConditionalPut(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	for _, size := range []int{10, testInline * 3} {
		key := fmt.Sprintf("cond-%d", size)
		data := randBytes(uint64(size), size)
		putWith := func(opts PutOptions, body []byte) (ObjectInfo, error) {
			return l.PutObject(ctx, testBucket, key, bytes.NewReader(body), int64(len(body)), opts)
		}
		if _, err := putWith(PutOptions{IfMatch: "abc"}, data); !errors.Is(err, ErrObjectNotFound) {
			t.Fatalf("size %d: If-Match on a missing key: %v", size, err)
		}
		first, err := putWith(PutOptions{IfNoneMatch: "*"}, data)
		if err != nil {
			t.Fatalf("size %d: If-None-Match on a new key: %v", size, err)
		}
		other := randBytes(99, size)
		if _, err := putWith(PutOptions{IfNoneMatch: "*"}, other); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("size %d: If-None-Match on an existing key: %v", size, err)
		}
		if _, err := putWith(PutOptions{IfMatch: "0123"}, other); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("size %d: If-Match with a wrong ETag: %v", size, err)
		}
		if got, err := get(l, key); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: a failed conditional put changed the object", size)
		}
		if _, err := putWith(PutOptions{IfMatch: first.ETag}, other); err != nil {
			t.Fatalf("size %d: If-Match with the current ETag: %v", size, err)
		}
		if got, err := get(l, key); err != nil || !bytes.Equal(got, other) {
			t.Fatalf("size %d: the matching conditional put did not land", size)
		}
	}
}

func TestListUploads(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	ids := map[string]string{}
	for _, k := range []string{"a/1", "a/2", "b", "c/d/e"} {
		id, err := l.NewMultipart(ctx, testBucket, k, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[k] = id
	}
	keys := func(r ListUploadsResult) string {
		var s []string
		for _, u := range r.Uploads {
			s = append(s, u.Key)
		}
		return strings.Join(s, ",") + "|" + strings.Join(r.Prefixes, ",")
	}
	all, err := l.ListUploads(ctx, testBucket, ListUploadsOptions{})
	if err != nil || keys(all) != "a/1,a/2,b,c/d/e|" || all.IsTruncated || all.Uploads[0].UploadID != ids["a/1"] {
		t.Fatalf("all: %v %+v", err, all)
	}
	dl, err := l.ListUploads(ctx, testBucket, ListUploadsOptions{Delimiter: "/"})
	if err != nil || keys(dl) != "b|a/,c/" {
		t.Fatalf("delimiter: %v %q", err, keys(dl))
	}
	// Page through one at a time with the markers.
	var seen []string
	opts := ListUploadsOptions{MaxUploads: 1}
	for range 10 {
		page, err := l.ListUploads(ctx, testBucket, opts)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, keys(page))
		if !page.IsTruncated {
			break
		}
		opts.KeyMarker, opts.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
	if strings.Join(seen, ";") != "a/1|;a/2|;b|;c/d/e|" {
		t.Fatalf("pages %q", seen)
	}
	if err := l.AbortMultipart(ctx, testBucket, "b", ids["b"], AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	// An upload whose record survives on fewer than k peers (a complete
	// that missed some) is not listed.
	for i, id := range fc.ids {
		if i < 3 {
			p := fc.peers[id]
			p.mu.Lock()
			delete(p.uploads, uploadKey(testBucket, "a/2", ids["a/2"]))
			p.mu.Unlock()
		}
	}
	rest, err := l.ListUploads(ctx, testBucket, ListUploadsOptions{Prefix: "a/"})
	if err != nil || keys(rest) != "a/1|" {
		t.Fatalf("after abort and partial removal: %v %q", err, keys(rest))
	}
	if _, err := l.ListUploads(ctx, "nobucket", ListUploadsOptions{}); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
}
