package object

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// newUploadWithPart starts an upload of key and stores one part; it
// returns the upload's id and the part's ETag.
func newUploadWithPart(t *testing.T, l *Layer, key string) (string, string) {
	t.Helper()
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, key, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("p"), 2*testBlock)
	p, err := l.PutPart(ctx, testBucket, key, id, 1, bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return id, p.ETag
}

// uploadsOn counts the upload records the fake peers hold in bucket.
func uploadsOn(fc *fakeCluster, bucket string) int {
	n := 0
	for _, p := range fc.peers {
		p.mu.Lock()
		for k := range p.uploads {
			if strings.HasPrefix(k, bucket+"\x00") {
				n++
			}
		}
		p.mu.Unlock()
	}
	return n
}

func listedUploads(t *testing.T, l *Layer) int {
	t.Helper()
	res, err := l.ListUploads(context.Background(), testBucket, ListUploadsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Uploads)
}

// TestDeleteBucketAbortsUploads: a bucket whose only contents are uploads
// in progress is deleted, as S3 deletes it, and its uploads with it; the
// same name made again starts without them.
func TestDeleteBucketAbortsUploads(t *testing.T) {
	for _, older := range []bool{false, true} {
		l, fc := newTestLayer(t)
		ctx := context.Background()
		for _, p := range fc.peers {
			// Peers that refuse to drop a bucket holding uploads: the
			// delete must have aborted every upload before it asks.
			p.refuseUploads = older
		}
		id, _ := newUploadWithPart(t, l, "a")
		newUploadWithPart(t, l, "b/c")
		if err := l.DeleteBucket(ctx, testBucket); err != nil {
			t.Fatalf("older peers %v: delete of a bucket holding only uploads: %v", older, err)
		}
		if n := uploadsOn(fc, testBucket); n != 0 {
			t.Errorf("older peers %v: %d upload records left", older, n)
		}
		_, err := l.HeadBucket(ctx, testBucket)
		wantErr(t, err, ErrBucketNotFound)
		if err := l.MakeBucket(ctx, testBucket); err != nil {
			t.Fatal(err)
		}
		if n := listedUploads(t, l); n != 0 {
			t.Errorf("older peers %v: the new bucket lists %d uploads", older, n)
		}
		_, err = l.ListParts(ctx, testBucket, "a", id, 0, 0)
		wantErr(t, err, ErrUploadNotFound)
	}
}

// TestDeleteBucketWithObjectKeepsUploads: an object still makes the
// bucket not empty, and the refused delete aborts nothing.
func TestDeleteBucketWithObjectKeepsUploads(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	id, _ := newUploadWithPart(t, l, "up")
	put(t, l, "obj", []byte("x"))
	wantErr(t, l.DeleteBucket(ctx, testBucket), ErrBucketNotEmpty)
	parts, err := l.ListParts(ctx, testBucket, "up", id, 0, 0)
	if err != nil || len(parts.Parts) != 1 {
		t.Fatalf("upload after the refused delete: %+v, %v", parts, err)
	}
}

// TestDeleteBucketInterrupted: a delete that stops part way leaves a
// bucket that works. An abort that reaches no peer stops it before any
// peer drops the bucket, with the upload whole; a delete cut off after
// the aborts leaves the bucket without uploads, where new ones work, and
// deleting again finishes it.
func TestDeleteBucketInterrupted(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	id, _ := newUploadWithPart(t, l, "k")
	for _, p := range fc.peers {
		p.setFault(faultFailCommit)
	}
	if err := l.DeleteBucket(ctx, testBucket); err == nil {
		t.Fatal("delete succeeded though no abort did")
	}
	for _, p := range fc.peers {
		p.setFault(faultNone)
	}
	if _, err := l.HeadBucket(ctx, testBucket); err != nil {
		t.Fatalf("bucket after the failed delete: %v", err)
	}
	if parts, err := l.ListParts(ctx, testBucket, "k", id, 0, 0); err != nil || len(parts.Parts) != 1 {
		t.Fatalf("upload after the failed delete: %+v, %v", parts, err)
	}

	// Cut off between the aborts and the peers' deletes.
	if err := l.abortBucketUploads(ctx, testBucket); err != nil {
		t.Fatal(err)
	}
	if n := uploadsOn(fc, testBucket); n != 0 {
		t.Fatalf("%d upload records left after the aborts", n)
	}
	if _, err := l.HeadBucket(ctx, testBucket); err != nil {
		t.Fatalf("bucket after the aborts: %v", err)
	}
	again, etag := newUploadWithPart(t, l, "k")
	if _, err := l.CompleteMultipart(ctx, testBucket, "k", again, []CompletePart{{Number: 1, ETag: etag}}, CompleteOptions{}); err != nil {
		t.Fatalf("a new upload in the bucket: %v", err)
	}
	if err := l.DeleteObject(ctx, testBucket, "k"); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteBucket(ctx, testBucket); err != nil {
		t.Fatalf("delete again: %v", err)
	}
}

// TestDeleteBucketNeedsListingMajority: with most peers unable to list
// uploads, the delete stops before aborting or dropping anything.
func TestDeleteBucketNeedsListingMajority(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	newUploadWithPart(t, l, "k")
	for _, id := range fc.ids[:3] {
		fc.peers[id].setFault(faultDown)
	}
	wantErr(t, l.DeleteBucket(ctx, testBucket), ErrQuorum)
	for _, id := range fc.ids[:3] {
		fc.peers[id].setFault(faultNone)
	}
	if n := listedUploads(t, l); n != 1 {
		t.Fatalf("%d uploads listed after the refused delete, want 1", n)
	}
}

// TestDeleteBucketBesideAnotherDelete: a delete that finds the bucket,
// then finds it already dropped on some peers (another delete got there
// first), goes on and succeeds, and one that finds it dropped on most
// peers answers ErrBucketNotFound: neither is a quorum failure.
func TestDeleteBucketBesideAnotherDelete(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		dropped int
		want    error
	}{
		{"dropped on three of six", 3, nil},
		{"dropped on four of six", 4, ErrBucketNotFound},
		{"dropped everywhere", 6, ErrBucketNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, fc := newTestLayer(t)
			for _, id := range fc.ids[:tt.dropped] {
				if err := fc.peers[id].DeleteBucket(ctx, testBucket); err != nil {
					t.Fatal(err)
				}
			}
			err := l.abortBucketUploads(ctx, testBucket)
			if tt.want == nil && err != nil {
				t.Fatalf("abort uploads: %v, want success", err)
			}
			if tt.want != nil {
				wantErr(t, err, tt.want)
			}
		})
	}
}
