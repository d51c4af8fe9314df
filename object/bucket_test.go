package object

import (
	"bytes"
	"context"
	"testing"

	"tessera/meta"
)

func TestBucketLifecycle(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	wantErr(t, l.MakeBucket(ctx, testBucket), ErrBucketExists)
	if err := l.MakeBucket(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	info, err := l.HeadBucket(ctx, "second")
	if err != nil || info.Name != "second" || info.Created.IsZero() {
		t.Fatalf("head: %+v, %v", info, err)
	}
	_, err = l.HeadBucket(ctx, "nope")
	wantErr(t, err, ErrBucketNotFound)

	bs, err := l.ListBuckets(ctx)
	if err != nil || len(bs) != 2 || bs[0].Name != testBucket || bs[1].Name != "second" {
		t.Fatalf("list: %+v, %v", bs, err)
	}

	put(t, l, "k", []byte("x"))
	wantErr(t, l.DeleteBucket(ctx, testBucket), ErrBucketNotEmpty)
	if err := l.DeleteObject(ctx, testBucket, "k"); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteBucket(ctx, testBucket); err != nil {
		t.Fatalf("delete of a bucket holding only tombstones: %v", err)
	}
	_, err = l.HeadBucket(ctx, testBucket)
	wantErr(t, err, ErrBucketNotFound)
	wantErr(t, l.DeleteBucket(ctx, testBucket), ErrBucketNotFound)
	for _, p := range fc.peers {
		if _, ok := p.buckets[testBucket]; ok {
			t.Fatalf("%s still holds the deleted bucket", p.id)
		}
	}
	_, err = l.PutObject(ctx, testBucket, "k", bytes.NewReader([]byte("x")), 1, PutOptions{})
	wantErr(t, err, ErrBucketNotFound)
}

func TestBucketWithFaultyPeers(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	fc.peers["p1"].setFault(faultDown)
	fc.peers["p4"].setFault(faultDown)
	if err := l.MakeBucket(ctx, "two-down"); err != nil {
		t.Fatalf("make with 2 of 6 down: %v", err)
	}
	fc.heal()
	// The two peers that missed the creation do not hide the bucket.
	if _, err := l.HeadBucket(ctx, "two-down"); err != nil {
		t.Fatal(err)
	}
	bs, err := l.ListBuckets(ctx)
	if err != nil || len(bs) != 2 {
		t.Fatalf("list: %+v, %v", bs, err)
	}

	for _, id := range []meta.PeerID{"p0", "p2", "p3", "p5"} {
		fc.peers[id].setFault(faultDown)
	}
	wantErr(t, l.MakeBucket(ctx, "four-down"), ErrQuorum)
	_, err = l.HeadBucket(ctx, testBucket)
	wantErr(t, err, ErrQuorum)
	_, err = l.ListBuckets(ctx)
	wantErr(t, err, ErrQuorum)
}

func TestDeleteObject(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	for _, size := range []int{10, 2 * testBlock} {
		data := randBytes(uint64(size), size)
		put(t, l, "k", data)
		if err := l.DeleteObject(ctx, testBucket, "k"); err != nil {
			t.Fatal(err)
		}
		_, err := get(l, "k")
		wantErr(t, err, ErrObjectNotFound)
		_, err = l.HeadObject(ctx, testBucket, "k")
		wantErr(t, err, ErrObjectNotFound)
		// Deleting again, or a key never written, succeeds.
		if err := l.DeleteObject(ctx, testBucket, "k"); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.DeleteObject(ctx, testBucket, "never"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, l.DeleteObject(ctx, "nope", "k"), ErrBucketNotFound)
	_, err := l.HeadObject(ctx, "nope", "k")
	wantErr(t, err, ErrBucketNotFound)

	// A delete with two peers down still wins over the old version once
	// they return.
	put(t, l, "k", []byte("back"))
	peers := placementPeers(fc, "k", 6)
	peers[0].setFault(faultDown)
	peers[3].setFault(faultDown)
	if err := l.DeleteObject(ctx, testBucket, "k"); err != nil {
		t.Fatal(err)
	}
	fc.heal()
	_, err = get(l, "k")
	wantErr(t, err, ErrObjectNotFound)
	put(t, l, "k", []byte("again"))
	mustGet(t, l, "k", []byte("again"))
}

func TestBucketOnMinorityIsHidden(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	// Left behind on two peers by a delete that missed them.
	for _, id := range []meta.PeerID{"p0", "p1"} {
		if err := fc.peers[id].MakeBucket(ctx, meta.Bucket{Name: "ghost"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := l.HeadBucket(ctx, "ghost")
	wantErr(t, err, ErrBucketNotFound)
	bs, err := l.ListBuckets(ctx)
	if err != nil || len(bs) != 1 || bs[0].Name != testBucket {
		t.Fatalf("list: %+v, %v", bs, err)
	}
	_, err = l.PutObject(ctx, "ghost", "k", bytes.NewReader(nil), 0, PutOptions{})
	wantErr(t, err, ErrBucketNotFound)
}
