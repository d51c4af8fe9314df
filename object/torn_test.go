package object

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// TestWriteCutShortBetweenCommits: a gateway that dies between the
// commits of one write leaves the new version on three peers of six, one
// too few to read it, and the old version's records on the other three,
// as few. The peers that took the new version keep the old one until the
// new one is settled, so another gateway reads the old version whole,
// and the key goes on: the next write lands and settles, and then no peer
// keeps anything. Each write here is cut short by failing its commits on
// the last three peers of the placement, as a gateway killed after the
// first three commits left.
func TestWriteCutShortBetweenCommits(t *testing.T) {
	writes := []struct {
		name  string
		size  int
		write func(t *testing.T, l *Layer) error
	}{
		{"inline put", 300, func(t *testing.T, l *Layer) error { return putErr(l, "k", randBytes(9, 300)) }},
		{"stored put", 2*testBlock + 5, func(t *testing.T, l *Layer) error { return putErr(l, "k", randBytes(9, 2*testBlock+5)) }},
		{"delete", 2*testBlock + 5, func(t *testing.T, l *Layer) error {
			return l.DeleteObject(context.Background(), testBucket, "k")
		}},
		{"complete upload", testMinPart + 10, nil}, // see completeCutShort
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			l, fc := newTestLayer(t)
			old := randBytes(1, w.size)
			put(t, l, "k", old)
			peers := placementPeers(fc, "k", 6)
			waitSettled(t, peers, "k")
			cut := func() {
				for _, p := range peers[3:] {
					p.setFault(faultFailCommit)
				}
			}
			var err error
			if w.write == nil {
				err = completeCutShort(t, l, cut)
			} else {
				cut()
				err = w.write(t, l)
			}
			wantErr(t, err, ErrQuorum)
			fc.heal()
			other := layerOn(t, fc, func(c *Config) { c.WriterID = "gw2" })
			info, err := other.HeadObject(context.Background(), testBucket, "k")
			if err != nil || info.ETag != md5hex(old) {
				t.Fatalf("head after the cut write: %+v, %v; want the old version", info, err)
			}
			mustGet(t, other, "k", old)
			page, err := other.ListObjects(context.Background(), testBucket, ListOptions{MaxKeys: 10})
			if err != nil || len(page.Objects) != 1 || page.Objects[0].ETag != md5hex(old) {
				t.Fatalf("listing after the cut write: %+v, %v; want the old version", page.Objects, err)
			}
			next := randBytes(3, w.size)
			put(t, other, "k", next)
			waitSettled(t, peers, "k")
			mustGet(t, l, "k", next)
		})
	}
}

// completeCutShort uploads the parts of an upload over k, then completes
// it with cut in effect.
func completeCutShort(t *testing.T, l *Layer, cut func()) error {
	t.Helper()
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, "k", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(5, testMinPart), randBytes(6, 10)
	putPart(t, l, "k", id, 1, p1)
	putPart(t, l, "k", id, 2, p2)
	cut()
	_, err = l.CompleteMultipart(ctx, testBucket, "k", id, []CompletePart{{Number: 1, ETag: md5hex(p1)}, {Number: 2, ETag: md5hex(p2)}}, CompleteOptions{})
	return err
}

func putErr(l *Layer, key string, data []byte) error {
	_, err := l.PutObject(context.Background(), testBucket, key, bytes.NewReader(data), int64(len(data)), PutOptions{})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// TestFreshKeyCutShort: a first write of a key cut short on three peers
// of six leaves nothing readable: the key reads as absent and is not
// listed, and the next write lands.
func TestFreshKeyCutShort(t *testing.T) {
	l, fc := newTestLayer(t)
	peers := placementPeers(fc, "k", 6)
	for _, p := range peers[3:] {
		p.setFault(faultFailCommit)
	}
	wantErr(t, putErr(l, "k", randBytes(1, 300)), ErrQuorum)
	fc.heal()
	_, err := l.HeadObject(context.Background(), testBucket, "k")
	wantErr(t, err, ErrObjectNotFound)
	page, err := l.ListObjects(context.Background(), testBucket, ListOptions{MaxKeys: 10})
	if err != nil || len(page.Objects) != 0 {
		t.Fatalf("listing after the cut write: %+v, %v; want nothing", page.Objects, err)
	}
	put(t, l, "k", randBytes(2, 300))
	mustGet(t, l, "k", randBytes(2, 300))
}
