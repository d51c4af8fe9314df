package object

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// completedUpload starts an upload of key with two parts and returns its
// id and the Complete list naming them.
func completedUpload(t *testing.T, l *Layer, key string) (string, []CompletePart, []byte) {
	t.Helper()
	id, err := l.NewMultipart(context.Background(), testBucket, key, PutOptions{ContentType: "a/b"})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(1, testMinPart), randBytes(2, 99)
	putPart(t, l, key, id, 1, p1)
	putPart(t, l, key, id, 2, p2)
	return id, []CompletePart{{Number: 1, ETag: md5hex(p1)}, {Number: 2, ETag: `"` + md5hex(p2) + `"`}}, append(p1, p2...)
}

// A Complete repeated after success returns the same result, as S3 does,
// while the key still holds what that upload made.
func TestCompleteRepeated(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	id, parts, data := completedUpload(t, l, "mp")
	first, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{})
	if err != nil {
		t.Fatalf("repeated complete: %v", err)
	}
	if again.ETag != first.ETag || again.Size != first.Size || !again.ModTime.Equal(first.ModTime) || again.ContentType != "a/b" {
		t.Fatalf("repeated complete %+v, first %+v", again, first)
	}
	mustGet(t, l, "mp", data)

	for name, other := range map[string][]CompletePart{
		"fewer parts":  parts[:1],
		"another etag": {parts[0], {Number: 2, ETag: md5hex([]byte("x"))}},
	} {
		_, err := l.CompleteMultipart(ctx, testBucket, "mp", id, other, CompleteOptions{})
		if err == nil {
			t.Errorf("repeated complete with %s succeeded", name)
		}
		wantErr(t, err, ErrUploadNotFound)
	}
	_, err = l.CompleteMultipart(ctx, testBucket, "mp", "never-issued", parts, CompleteOptions{})
	wantErr(t, err, ErrUploadNotFound)

	// Once the key holds something else, the upload is simply gone.
	put(t, l, "mp", []byte("overwritten"))
	_, err = l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{})
	wantErr(t, err, ErrUploadNotFound)

	id, parts, _ = completedUpload(t, l, "gone")
	if _, err := l.CompleteMultipart(ctx, testBucket, "gone", id, parts, CompleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteObject(ctx, testBucket, "gone"); err != nil {
		t.Fatal(err)
	}
	_, err = l.CompleteMultipart(ctx, testBucket, "gone", id, parts, CompleteOptions{})
	wantErr(t, err, ErrUploadNotFound)
}

// Concurrent Completes of one upload through a gateway all succeed with
// the same object, which stays readable: they do not race on the peers.
func TestCompleteConcurrent(t *testing.T) {
	l, _ := newTestLayer(t)
	id, parts, data := completedUpload(t, l, "mp")
	const n = 6
	infos := make([]ObjectInfo, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			infos[i], errs[i] = l.CompleteMultipart(context.Background(), testBucket, "mp", id, parts, CompleteOptions{})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || infos[i].ETag != infos[0].ETag || !infos[i].ModTime.Equal(infos[0].ModTime) {
			t.Fatalf("complete %d: %+v, %v; first %+v", i, infos[i], errs[i], infos[0])
		}
	}
	got, err := get(l, "mp")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object after concurrent completes: %d bytes, %v", len(got), err)
	}
	if len(l.completing.locks) != 0 {
		t.Fatalf("%d upload locks left behind", len(l.completing.locks))
	}
}
