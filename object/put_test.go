package object

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"tessera/meta"
)

func TestPutGetSizes(t *testing.T) {
	l, fc := newTestLayer(t)
	sizes := []int{0, 1, 7, testInline - 1, testInline, testInline + 1,
		testBlock - 1, testBlock, testBlock + 1, 3*testBlock + 517}
	for _, size := range sizes {
		for _, known := range []bool{true, false} {
			t.Run(fmt.Sprintf("size=%d/known=%v", size, known), func(t *testing.T) {
				key := fmt.Sprintf("obj-%d-%v", size, known)
				data := randBytes(uint64(size), size)
				declared := int64(size)
				if !known {
					declared = -1
				}
				stagesBefore := totalStages(fc)
				info, err := l.PutObject(context.Background(), testBucket, key, bytes.NewReader(data), declared, PutOptions{ContentType: "x/y"})
				if err != nil {
					t.Fatal(err)
				}
				if info.Size != int64(size) || info.ETag != md5hex(data) || info.StorageClass != ClassStandard {
					t.Fatalf("info = %+v", info)
				}
				inline := size <= testInline
				if staged := totalStages(fc) > stagesBefore; staged == inline {
					t.Fatalf("inline=%v but staged=%v", inline, staged)
				}
				rec := fc.peerAt(testBucket, key, 6, 0).held(testBucket, key)
				if rec == nil || rec.Inlined != inline || rec.ShardIndex != 0 {
					t.Fatalf("record on shard 0 peer: %+v", rec)
				}
				mustGet(t, l, key, data)
				head, err := l.HeadObject(context.Background(), testBucket, key)
				if err != nil || head.ETag != info.ETag || head.ContentType != "x/y" || head.Size != int64(size) {
					t.Fatalf("head = %+v, %v", head, err)
				}
			})
		}
	}
}

func totalStages(fc *fakeCluster) int64 {
	return sumPeers(fc, func(p *fakePeer) int64 { return p.stages.Load() })
}

// sumPeers adds up one counter of every fake peer.
func sumPeers(fc *fakeCluster, count func(*fakePeer) int64) int64 {
	var n int64
	for _, p := range fc.peers {
		n += count(p)
	}
	return n
}

func TestGetRanges(t *testing.T) {
	l, _ := newTestLayer(t)
	const size = 3*testBlock + 1000
	data := randBytes(42, size)
	put(t, l, "big", data)
	small := randBytes(43, 500)
	put(t, l, "small", small)
	cases := []struct {
		key         string
		off, length int64
		want        []byte
		err         error
	}{
		{"big", 0, -1, data, nil},
		{"big", 0, 1, data[:1], nil},
		{"big", size - 1, 1, data[size-1:], nil},
		{"big", testBlock - 1, 2, data[testBlock-1 : testBlock+1], nil},
		{"big", 100, 2 * testBlock, data[100 : 100+2*testBlock], nil},
		{"big", size - 10, 100, data[size-10:], nil},
		{"big", 5, 0, nil, nil},
		{"big", size, 1, nil, ErrInvalidRange},
		{"big", size + 5, -1, nil, ErrInvalidRange},
		{"big", -1, 4, nil, ErrInvalidRange},
		{"small", 10, 20, small[10:30], nil},
		{"small", 499, -1, small[499:], nil},
		{"small", 500, -1, nil, ErrInvalidRange},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d+%d", c.key, c.off, c.length), func(t *testing.T) {
			got, err := getRange(l, c.key, c.off, c.length)
			if c.err != nil {
				wantErr(t, err, c.err)
				return
			}
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("got %d bytes, err %v; want %d bytes", len(got), err, len(c.want))
			}
		})
	}
}

func TestGetEmptyObjectRange(t *testing.T) {
	l, _ := newTestLayer(t)
	put(t, l, "empty", nil)
	got, err := getRange(l, "empty", 0, -1)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %d bytes, %v", len(got), err)
	}
}

func TestGetStartErrorReturnedUnchanged(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "k", randBytes(1, 5000))
	sentinel := errors.New("precondition failed")
	readsBefore := totalReads(fc)
	err := l.GetObject(context.Background(), testBucket, "k", func(ObjectInfo) (io.Writer, int64, int64, error) {
		return nil, 0, 0, sentinel
	})
	if err != sentinel {
		t.Fatalf("err = %v, want the start error itself", err)
	}
	if totalReads(fc) != readsBefore {
		t.Fatal("shards were read although start failed")
	}
}

func totalReads(fc *fakeCluster) int64 {
	var n int64
	for _, p := range fc.peers {
		n += p.reads.Load()
	}
	return n
}

// eofReader reports whether its consumer saw io.EOF.
type eofReader struct {
	r       io.Reader
	sawEOF  bool
	readErr error // returned instead of io.EOF when set
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		if e.readErr != nil {
			return n, e.readErr
		}
		e.sawEOF = true
	}
	return n, err
}

func TestPutBodyHandling(t *testing.T) {
	errSig := errors.New("chunk signature mismatch")
	for _, size := range []int{10, testInline, 5 * testBlock} {
		data := randBytes(uint64(size), size)
		cases := []struct {
			name     string
			body     []byte
			declared int64
			readErr  error
			md5      []byte
			want     error
		}{
			{"exact", data, int64(size), nil, nil, nil},
			{"unknown size", data, -1, nil, nil, nil},
			{"good md5", data, int64(size), nil, md5sum(data), nil},
			{"short", data[:size-1], int64(size), nil, nil, ErrIncompleteBody},
			{"long", append(append([]byte(nil), data...), 'x'), int64(size), nil, nil, ErrBodyTooLong},
			{"reader error at end", data, int64(size), errSig, nil, errSig},
			{"reader error unknown size", data, -1, errSig, nil, errSig},
			{"bad md5", data, int64(size), nil, md5sum([]byte("other")), ErrBadDigest},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%d/%s", size, c.name), func(t *testing.T) {
				l, fc := newTestLayer(t)
				old := []byte("previous version")
				put(t, l, "k", old)
				commits := totalCommits(fc)
				r := &eofReader{r: bytes.NewReader(c.body), readErr: c.readErr}
				_, err := l.PutObject(context.Background(), testBucket, "k", r, c.declared, PutOptions{ContentMD5: c.md5})
				if c.want == nil {
					if err != nil || !r.sawEOF {
						t.Fatalf("err %v, saw EOF %v", err, r.sawEOF)
					}
					mustGet(t, l, "k", data)
					return
				}
				wantErr(t, err, c.want)
				if totalCommits(fc) != commits {
					t.Fatal("a failed PUT committed records")
				}
				mustGet(t, l, "k", old)
			})
		}
	}
}

func md5sum(b []byte) []byte { s := md5.Sum(b); return s[:] }

func totalCommits(fc *fakeCluster) int64 {
	return sumPeers(fc, func(p *fakePeer) int64 { return p.commits.Load() })
}

func TestPutMissingBucketFailsBeforeStreaming(t *testing.T) {
	l, fc := newTestLayer(t)
	for _, size := range []int{10, 3 * testBlock} {
		_, err := l.PutObject(context.Background(), "nope", "k", bytes.NewReader(make([]byte, size)), int64(size), PutOptions{})
		wantErr(t, err, ErrBucketNotFound)
	}
	if totalStages(fc) != 0 || totalCommits(fc) != 0 {
		t.Fatal("a PUT to a missing bucket reached the peers' write path")
	}
}

func TestPutBucketDeletedBehindCache(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "warm", []byte("x")) // caches the bucket as present
	for _, p := range fc.peers {
		p.mu.Lock()
		delete(p.buckets, testBucket)
		p.mu.Unlock()
	}
	_, err := l.PutObject(context.Background(), testBucket, "k", bytes.NewReader([]byte("y")), 1, PutOptions{})
	wantErr(t, err, ErrBucketNotFound)
}

func TestOverwriteNewestWins(t *testing.T) {
	l, _ := newTestLayer(t)
	versions := [][]byte{randBytes(1, 100), randBytes(2, 3*testBlock), randBytes(3, 0), randBytes(4, 2*testBlock+1), randBytes(5, 10)}
	for i, v := range versions {
		put(t, l, "k", v)
		mustGet(t, l, "k", v)
		if i > 0 {
			mustGet(t, l, "k", v)
		}
	}
}

func TestStampsMonotonicWithStuckClock(t *testing.T) {
	fixed := time.Unix(1000, 0)
	l, _ := newTestLayer(t, func(c *Config) { c.Now = func() time.Time { return fixed } })
	put(t, l, "k", []byte("one"))
	put(t, l, "k", []byte("two"))
	mustGet(t, l, "k", []byte("two"))
}

func TestCrashedPutOnTwoPeersFallsBack(t *testing.T) {
	for _, size := range []int{50, 2 * testBlock} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			l, fc := newTestLayer(t)
			old := randBytes(1, size)
			put(t, l, "k", old)
			peers := placementPeers(fc, "k", 6)
			// A newer record on 2 peers whose shards (for the big case)
			// the peers never got: a PUT that crashed between commits.
			// Those peers keep the old shard files, as a real peer does
			// until its new data is in place.
			for i := range 2 {
				crash := *peers[i].held(testBucket, "k")
				crash.Stamp.Nanos += 1e9
				crash.Stamp.Writer = "dead"
				raw, err := meta.MarshalObject(&crash)
				if err != nil {
					t.Fatal(err)
				}
				peers[i].mu.Lock()
				peers[i].setRecord(&crash, raw)
				peers[i].mu.Unlock()
			}
			// Let the two peers answer first, so the read knows they hold
			// another version and ranks them last for shards.
			for _, p := range peers[2:] {
				p.setDelay(50 * time.Millisecond)
			}
			mustGet(t, l, "k", old)
			fc.heal()
			if n := peers[0].reads.Load() + peers[1].reads.Load(); n != 0 {
				t.Fatalf("%d shard reads from peers holding another version", n)
			}
		})
	}
}
