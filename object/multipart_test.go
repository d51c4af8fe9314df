package object

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"tessera/meta"
)

const testMinPart = 100 << 10 // newTestLayer's MinPartSize

func putPart(t testing.TB, l *Layer, key, id string, n int, data []byte) PartInfo {
	t.Helper()
	p, err := l.PutPart(context.Background(), testBucket, key, id, n, bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatalf("part %d: %v", n, err)
	}
	return p
}

func multipartETag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		s := md5.Sum(p)
		h.Write(s[:])
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(parts))
}

func TestMultipartHappyPath(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{ContentType: "a/b", UserMeta: map[string]string{"x": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(id, "/+=?&%") || len(id) < 16 {
		t.Fatalf("upload id %q is not url-safe or too short", id)
	}
	p1 := randBytes(1, testMinPart)
	p2 := randBytes(2, testMinPart+testBlock+7)
	p3 := randBytes(3, 10) // the last part may be small
	for n, d := range map[int][]byte{1: p1, 2: p2, 3: p3} {
		if info := putPart(t, l, "mp", id, n, d); info.ETag != md5hex(d) || info.Size != int64(len(d)) {
			t.Fatalf("part %d info %+v", n, info)
		}
	}
	// Re-uploading a part replaces it.
	p2 = randBytes(22, testMinPart+5)
	putPart(t, l, "mp", id, 2, p2)

	lp, err := l.ListParts(ctx, testBucket, "mp", id, 0, 2)
	if err != nil || len(lp.Parts) != 2 || !lp.IsTruncated || lp.NextPartNumberMarker != 2 || lp.Parts[1].ETag != md5hex(p2) {
		t.Fatalf("list parts page 1: %+v, %v", lp, err)
	}
	lp, err = l.ListParts(ctx, testBucket, "mp", id, 2, 2)
	if err != nil || len(lp.Parts) != 1 || lp.IsTruncated || lp.Parts[0].Number != 3 || lp.StorageClass != ClassStandard {
		t.Fatalf("list parts page 2: %+v, %v", lp, err)
	}

	info, err := l.CompleteMultipart(ctx, testBucket, "mp", id, []CompletePart{
		{Number: 1, ETag: md5hex(p1)}, {Number: 2, ETag: `"` + md5hex(p2) + `"`}, {Number: 3, ETag: strings.ToUpper(md5hex(p3))},
	}, CompleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := bytes.Join([][]byte{p1, p2, p3}, nil)
	if info.ETag != multipartETag(p1, p2, p3) || info.Size != int64(len(all)) || info.Parts != 3 || info.ContentType != "a/b" || info.UserMeta["x"] != "1" {
		t.Fatalf("info %+v", info)
	}
	mustGet(t, l, "mp", all)
	page, err := l.ListObjects(ctx, testBucket, ListOptions{Prefix: "mp", MaxKeys: 10})
	if err != nil || len(page.Objects) != 1 || page.Objects[0].ETag != info.ETag || page.Objects[0].Parts != 3 {
		t.Fatalf("listing after complete: %+v, %v", page, err)
	}
	// Ranges within and across part boundaries.
	for _, r := range [][2]int64{{0, 5}, {testMinPart - 3, 10}, {testMinPart + 1, testMinPart + 2}, {int64(len(all)) - 12, 12}} {
		got, err := getRange(l, "mp", r[0], r[1])
		if err != nil || !bytes.Equal(got, all[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: %d bytes, %v", r, len(got), err)
		}
	}
	// Degraded read of a multipart object.
	peers := placementPeers(fc, "mp", 6)
	peers[1].setFault(faultGarbage)
	peers[2].setFault(faultDown)
	mustGet(t, l, "mp", all)
	fc.heal()
	// The upload is gone once completed.
	_, err = l.ListParts(ctx, testBucket, "mp", id, 0, 0)
	wantErr(t, err, ErrUploadNotFound)
}

func TestMultipartCompleteSubsetOfParts(t *testing.T) {
	l, _ := newTestLayer(t)
	id, err := l.NewMultipart(context.Background(), testBucket, "mp", PutOptions{StorageClass: ClassReduced})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2, p3 := randBytes(1, testMinPart), randBytes(2, 20), randBytes(3, testMinPart)
	putPart(t, l, "mp", id, 1, p1)
	putPart(t, l, "mp", id, 2, p2)
	putPart(t, l, "mp", id, 5, p3)
	info, err := l.CompleteMultipart(context.Background(), testBucket, "mp", id, []CompletePart{{Number: 1, ETag: md5hex(p1)}, {Number: 5, ETag: md5hex(p3)}}, CompleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.StorageClass != ClassReduced || info.ETag != multipartETag(p1, p3) {
		t.Fatalf("info %+v", info)
	}
	mustGet(t, l, "mp", append(append([]byte(nil), p1...), p3...))
}

func TestMultipartErrors(t *testing.T) {
	ctx := context.Background()
	big, small := randBytes(1, testMinPart), randBytes(2, 50)
	setup := func(t *testing.T) (*Layer, *fakeCluster, string) {
		l, fc := newTestLayer(t)
		id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		putPart(t, l, "mp", id, 1, big)
		putPart(t, l, "mp", id, 2, small)
		putPart(t, l, "mp", id, 3, small)
		return l, fc, id
	}
	complete := func(l *Layer, id string, parts ...CompletePart) error {
		_, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{})
		return err
	}
	cases := []struct {
		name string
		run  func(l *Layer, fc *fakeCluster, id string) error
		want error
	}{
		{"unknown upload part", func(l *Layer, _ *fakeCluster, _ string) error {
			_, err := l.PutPart(ctx, testBucket, "mp", "nope", 1, bytes.NewReader(small), 50, nil)
			return err
		}, ErrUploadNotFound},
		{"unknown upload complete", func(l *Layer, _ *fakeCluster, _ string) error {
			return complete(l, "nope", CompletePart{Number: 1, ETag: md5hex(big)})
		}, ErrUploadNotFound},
		{"upload of another key", func(l *Layer, _ *fakeCluster, id string) error {
			_, err := l.ListParts(ctx, testBucket, "other", id, 0, 0)
			return err
		}, ErrUploadNotFound},
		{"part number 0", func(l *Layer, _ *fakeCluster, id string) error {
			_, err := l.PutPart(ctx, testBucket, "mp", id, 0, bytes.NewReader(small), 50, nil)
			return err
		}, ErrInvalidPartNumber},
		{"part number 10001", func(l *Layer, _ *fakeCluster, id string) error {
			_, err := l.PutPart(ctx, testBucket, "mp", id, MaxPartNumber+1, bytes.NewReader(small), 50, nil)
			return err
		}, ErrInvalidPartNumber},
		{"part bad md5", func(l *Layer, _ *fakeCluster, id string) error {
			_, err := l.PutPart(ctx, testBucket, "mp", id, 4, bytes.NewReader(small), 50, md5sum(big))
			return err
		}, ErrBadDigest},
		{"part short body", func(l *Layer, _ *fakeCluster, id string) error {
			_, err := l.PutPart(ctx, testBucket, "mp", id, 4, bytes.NewReader(small), 51, nil)
			return err
		}, ErrIncompleteBody},
		{"no parts", func(l *Layer, _ *fakeCluster, id string) error { return complete(l, id) }, ErrInvalidPart},
		{"descending", func(l *Layer, _ *fakeCluster, id string) error {
			return complete(l, id, CompletePart{Number: 2, ETag: md5hex(small)}, CompletePart{Number: 1, ETag: md5hex(big)})
		}, ErrInvalidPartOrder},
		{"duplicate", func(l *Layer, _ *fakeCluster, id string) error {
			return complete(l, id, CompletePart{Number: 1, ETag: md5hex(big)}, CompletePart{Number: 1, ETag: md5hex(big)})
		}, ErrInvalidPartOrder},
		{"missing part", func(l *Layer, _ *fakeCluster, id string) error {
			return complete(l, id, CompletePart{Number: 1, ETag: md5hex(big)}, CompletePart{Number: 7, ETag: md5hex(small)})
		}, ErrInvalidPart},
		{"wrong etag", func(l *Layer, _ *fakeCluster, id string) error {
			return complete(l, id, CompletePart{Number: 1, ETag: md5hex(small)})
		}, ErrInvalidPart},
		{"small middle part", func(l *Layer, _ *fakeCluster, id string) error {
			return complete(l, id, CompletePart{Number: 1, ETag: md5hex(big)}, CompletePart{Number: 2, ETag: md5hex(small)}, CompletePart{Number: 3, ETag: md5hex(small)})
		}, ErrEntityTooSmall},
		{"part on too few peers", func(l *Layer, fc *fakeCluster, id string) error {
			// Part 4 reached only 3 peers' commits (< k): not a usable part.
			peers := placementPeers(fc, "mp", 6)
			for _, i := range []int{0, 1, 2} {
				peers[i].setFault(faultFailCommit)
			}
			_, err := l.PutPart(ctx, testBucket, "mp", id, 4, bytes.NewReader(small), 50, nil)
			wantErr(t, err, ErrQuorum)
			fc.heal()
			return complete(l, id, CompletePart{Number: 1, ETag: md5hex(big)}, CompletePart{Number: 4, ETag: md5hex(small)})
		}, ErrInvalidPart},
		{"abort then part", func(l *Layer, _ *fakeCluster, id string) error {
			if err := l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{}); err != nil {
				return err
			}
			_, err := l.PutPart(ctx, testBucket, "mp", id, 4, bytes.NewReader(small), 50, nil)
			return err
		}, ErrUploadNotFound},
		{"abort twice", func(l *Layer, _ *fakeCluster, id string) error {
			if err := l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{}); err != nil {
				return err
			}
			return l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{})
		}, ErrUploadNotFound},
		{"new upload missing bucket", func(l *Layer, _ *fakeCluster, _ string) error {
			_, err := l.NewMultipart(ctx, "nope", "mp", PutOptions{})
			return err
		}, ErrBucketNotFound},
		{"abort missing bucket", func(l *Layer, _ *fakeCluster, id string) error {
			return l.AbortMultipart(ctx, "nope", "mp", id, AbortOptions{})
		}, ErrBucketNotFound},
		{"bad storage class", func(l *Layer, _ *fakeCluster, _ string) error {
			_, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{StorageClass: "NOPE"})
			return err
		}, ErrInvalidStorageClass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, fc, id := setup(t)
			wantErr(t, c.run(l, fc, id), c.want)
		})
	}
}

func TestMultipartWithFaultyPeers(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	peers := placementPeers(fc, "mp", 6)
	peers[0].setFault(faultDown)
	id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fc.heal()
	p1, p2 := randBytes(1, testMinPart), randBytes(2, 3*testBlock)
	putPart(t, l, "mp", id, 1, p1)
	peers[4].setFault(faultDown)
	putPart(t, l, "mp", id, 2, p2)
	fc.heal()
	// Shard 0 never had the upload and shard 4 lacks part 2: the other
	// four complete, and the object reads back.
	if _, err := l.CompleteMultipart(ctx, testBucket, "mp", id, []CompletePart{{Number: 1, ETag: md5hex(p1)}, {Number: 2, ETag: md5hex(p2)}}, CompleteOptions{}); err != nil {
		t.Fatal(err)
	}
	all := append(append([]byte(nil), p1...), p2...)
	mustGet(t, l, "mp", all)
	if rec := peers[4].held(testBucket, "mp"); rec != nil {
		t.Fatalf("a peer lacking part 2 completed the object: %+v", rec)
	}
	// Too many down for a new upload.
	for _, i := range []int{1, 2, 3} {
		peers[i].setFault(faultDown)
	}
	_, err = l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
	wantErr(t, err, ErrQuorum)
	fc.heal()
}

// Uploads keep the placement fixed at creation: a part always goes to the
// peers the upload record names, even when the record is read from peers
// whose shard index differs.
func TestMultipartUploadRecordsPerShard(t *testing.T) {
	l, fc := newTestLayer(t)
	id, err := l.NewMultipart(context.Background(), testBucket, "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range placementPeers(fc, "mp", 6) {
		u, err := p.GetUpload(context.Background(), testBucket, "mp", id)
		if err != nil || u.ShardIndex != i || u.Distribution[i] != p.id || u.Code != (meta.Code{K: 4, M: 2}) {
			t.Fatalf("shard %d upload record %+v, %v", i, u, err)
		}
	}
}
