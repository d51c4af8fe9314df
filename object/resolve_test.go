package object

import (
	"bytes"
	"context"
	"testing"

	"tessera/meta"
)

// A newer version seen on fewer than k peers, whose missing peers could
// hold the rest of a write quorum, may be committed: the read must fail
// rather than fall back to the older version or report not-found.
func TestResolveRefusesPossiblyStaleFallback(t *testing.T) {
	l, fc := newTestLayer(t, func(c *Config) { c.Classes = map[string]meta.Code{"TWO": {K: 2, M: 2}} })
	ctx := context.Background()
	opts := PutOptions{StorageClass: "TWO"}
	putTwo := func(data []byte) {
		t.Helper()
		if _, err := l.PutObject(ctx, testBucket, "k", bytes.NewReader(data), int64(len(data)), opts); err != nil {
			t.Fatal(err)
		}
	}
	putTwo([]byte("v1"))
	peers := placementPeers(fc, "k", 4)
	peers[3].setFault(faultFailCommit) // v2 commits on shards 0-2 only (W = 3)
	putTwo([]byte("v2"))
	fc.heal()
	mustGet(t, l, "k", []byte("v2"))

	peers[0].setFault(faultDown)
	peers[1].setFault(faultDown)
	defer fc.heal()
	got, err := get(l, "k")
	wantErr(t, err, ErrQuorum)
	if len(got) != 0 {
		t.Fatalf("wrote %q", got)
	}
}

func TestReadNeedsEnoughAnswers(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "k", []byte("x"))
	put(t, l, "k", []byte("y"))
	peers := placementPeers(fc, "k", 6)
	// Four silent peers: the two answering could both have missed the
	// newest write, so neither an answer nor not-found is safe.
	for _, i := range []int{0, 1, 2, 3} {
		peers[i].setFault(faultDown)
	}
	_, err := l.HeadObject(context.Background(), testBucket, "k")
	wantErr(t, err, ErrQuorum)
	_, err = l.HeadObject(context.Background(), testBucket, "other")
	wantErr(t, err, ErrQuorum)
}

func TestCheckRecordRejectsMisfiledCopies(t *testing.T) {
	good := &meta.Object{Bucket: "b", Key: "k", Code: meta.Code{K: 1, M: 1}, Distribution: []meta.PeerID{"p0", "p1"}, ShardIndex: 1}
	cases := []struct {
		name string
		mut  func(o *meta.Object)
		peer meta.PeerID
	}{
		{"other key", func(o *meta.Object) { o.Key = "x" }, "p1"},
		{"other bucket", func(o *meta.Object) { o.Bucket = "x" }, "p1"},
		{"wrong peer", func(o *meta.Object) {}, "p0"},
		{"index out of range", func(o *meta.Object) { o.ShardIndex = 2 }, "p1"},
		{"negative index", func(o *meta.Object) { o.ShardIndex = -1 }, "p1"},
		{"bad code", func(o *meta.Object) { o.Code = meta.Code{K: 0, M: 2} }, "p1"},
		{"short distribution", func(o *meta.Object) { o.Distribution = o.Distribution[:1]; o.ShardIndex = 0 }, "p0"},
	}
	if err := checkRecord(good, "p1", "b", "k"); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		o := *good
		o.Distribution = append([]meta.PeerID(nil), good.Distribution...)
		c.mut(&o)
		if err := checkRecord(&o, c.peer, "b", "k"); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
