package object

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"tessera/meta"
)

func TestCopyObject(t *testing.T) {
	ctx := context.Background()
	srcOpts := PutOptions{ContentType: "text/plain", UserMeta: map[string]string{"a": "1"},
		Headers: map[string]string{"Cache-Control": "no-cache"}, StorageClass: ClassReduced}
	for _, size := range []int{0, 200, 3*testBlock + 9} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			l, fc := newTestLayer(t)
			if err := l.MakeBucket(ctx, "dst"); err != nil {
				t.Fatal(err)
			}
			data := randBytes(uint64(size), size)
			if _, err := l.PutObject(ctx, testBucket, "src", bytes.NewReader(data), int64(size), srcOpts); err != nil {
				t.Fatal(err)
			}
			// Keep the metadata and class.
			info, err := l.CopyObject(ctx, testBucket, "src", "dst", "copy", CopyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if info.ETag != md5hex(data) || info.ContentType != "text/plain" || info.UserMeta["a"] != "1" ||
				info.Headers["Cache-Control"] != "no-cache" || info.StorageClass != ClassReduced {
				t.Fatalf("copy info %+v", info)
			}
			got := readAll(t, l, "dst", "copy")
			if !bytes.Equal(got, data) {
				t.Fatal("copy differs from source")
			}
			// Replace the metadata and class, degraded source.
			placementPeers(fc, "src", 6)[2].setFault(faultDown)
			info, err = l.CopyObject(ctx, testBucket, "src", testBucket, "copy2", CopyOptions{Replace: true,
				Put: PutOptions{ContentType: "x/y", StorageClass: "STANDARD"}})
			fc.heal()
			if err != nil {
				t.Fatal(err)
			}
			if info.ContentType != "x/y" || len(info.UserMeta) != 0 || info.StorageClass != ClassStandard {
				t.Fatalf("replaced info %+v", info)
			}
			mustGet(t, l, "copy2", data)
			if rec := fc.peerAt(testBucket, "copy2", 6, 0).held(testBucket, "copy2"); rec.Code != (meta.Code{K: 4, M: 2}) {
				t.Fatalf("copy2 code %s", rec.Code)
			}
		})
	}
}

func readAll(t *testing.T, l *Layer, bucket, key string) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := l.GetObject(context.Background(), bucket, key, func(ObjectInfo) (io.Writer, int64, int64, error) {
		return &buf, 0, -1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCopyErrors(t *testing.T) {
	ctx := context.Background()
	l, fc := newTestLayer(t)
	data := randBytes(1, 2*testBlock)
	put(t, l, "src", data)
	_, err := l.CopyObject(ctx, testBucket, "src", testBucket, "src", CopyOptions{})
	wantErr(t, err, ErrCopyToSelf)
	// Self-copy replacing the metadata rewrites it and keeps the bytes.
	info, err := l.CopyObject(ctx, testBucket, "src", testBucket, "src", CopyOptions{Replace: true, Put: PutOptions{ContentType: "new/type"}})
	if err != nil || info.ContentType != "new/type" {
		t.Fatalf("self copy: %+v, %v", info, err)
	}
	mustGet(t, l, "src", data)

	_, err = l.CopyObject(ctx, testBucket, "missing", testBucket, "x", CopyOptions{})
	wantErr(t, err, ErrObjectNotFound)
	_, err = l.CopyObject(ctx, testBucket, "src", "nope", "x", CopyOptions{})
	wantErr(t, err, ErrBucketNotFound)
	_, err = l.CopyObject(ctx, testBucket, "src", testBucket, "x", CopyOptions{Replace: true, Put: PutOptions{StorageClass: "NOPE"}})
	wantErr(t, err, ErrInvalidStorageClass)

	// A source that cannot be read fails the copy and writes nothing.
	peers := placementPeers(fc, "src", 6)
	for _, i := range []int{0, 1, 2} {
		peers[i].setFault(faultGarbage)
	}
	_, err = l.CopyObject(ctx, testBucket, "src", testBucket, "dst", CopyOptions{})
	if err == nil {
		t.Fatal("copy from an unreadable source succeeded")
	}
	fc.heal()
	_, err = l.HeadObject(ctx, testBucket, "dst")
	wantErr(t, err, ErrObjectNotFound)
}

// TestCopyTaggingDirective: tags follow x-amz-tagging-directive whatever
// the metadata directive says.
func TestCopyTaggingDirective(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	const tagsHeader = "X-Test-Tags"
	src := PutOptions{Headers: map[string]string{tagsHeader: "a=1", "Cache-Control": "src"}}
	if _, err := l.PutObject(ctx, testBucket, "tagged", bytes.NewReader([]byte("x")), 1, src); err != nil {
		t.Fatal(err)
	}
	newMeta := PutOptions{Headers: map[string]string{tagsHeader: "b=2", "Cache-Control": "new"}}
	for _, c := range []struct {
		name     string
		opts     CopyOptions
		tags, cc string
	}{
		{"copy both", CopyOptions{Tags: CopyTags{Header: tagsHeader}}, "a=1", "src"},
		{"replace metadata, copy tags", CopyOptions{Replace: true, Put: newMeta, Tags: CopyTags{Header: tagsHeader}}, "a=1", "new"},
		{"copy metadata, replace tags", CopyOptions{Tags: CopyTags{Header: tagsHeader, Replace: true, Value: "c=3"}}, "c=3", "src"},
		{"replace tags with none", CopyOptions{Tags: CopyTags{Header: tagsHeader, Replace: true}}, "", "src"},
	} {
		info, err := l.CopyObject(ctx, testBucket, "tagged", testBucket, "copy", c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if info.Headers[tagsHeader] != c.tags || info.Headers["Cache-Control"] != c.cc {
			t.Errorf("%s: tags %q cache-control %q, want %q %q", c.name, info.Headers[tagsHeader], info.Headers["Cache-Control"], c.tags, c.cc)
		}
	}
}
