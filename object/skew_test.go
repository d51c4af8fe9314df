package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// skewed names a gateway and sets its clock off by offset.
func skewed(writer string, offset time.Duration) func(*Config) {
	return func(c *Config) {
		c.WriterID = writer
		c.Now = func() time.Time { return time.Now().Add(offset) }
	}
}

// Two gateways whose clocks are 60 s apart write the same keys in turn,
// each write starting once the one before was acknowledged: reads return
// the last acknowledged write, whichever gateway made it. Reads go
// through the writer and a third gateway, never through the next writer,
// so that one learns of the newer stamps only from its peers' refusals.
func TestSkewedGatewaysWriteInOrder(t *testing.T) {
	ahead, fc := newTestLayer(t, skewed("gw-ahead", 30*time.Second))
	behind := layerOn(t, fc, skewed("gw-behind", -30*time.Second))
	reader := layerOn(t, fc, skewed("gw-reader", 0))
	writers := []*Layer{ahead, behind}
	ctx := context.Background()
	last := map[string][]byte{} // nil: deleted
	for i := range 40 {
		w := writers[i%2]
		key := fmt.Sprintf("k%d", i%3)
		body := randBytes(uint64(i), 10+i)
		switch i % 5 {
		case 1, 3:
			body = randBytes(uint64(i), 2*testBlock+i) // staged shard files
		case 2:
			body = append(randBytes(uint64(i), testMinPart), byte(i))
			putMultipart(t, w, key, body)
		case 4:
			if err := w.DeleteObject(ctx, testBucket, key); err != nil {
				t.Fatalf("write %d: delete %s: %v", i, key, err)
			}
			body = nil
		}
		if i%5 != 2 && i%5 != 4 {
			put(t, w, key, body)
		}
		last[key] = body
		for _, r := range []*Layer{w, reader} {
			checkLast(t, r, key, last[key], fmt.Sprintf("write %d by %s", i, w.cfg.WriterID))
		}
	}
	for key, body := range last {
		for _, r := range writers {
			checkLast(t, r, key, body, "at the end")
		}
	}
}

// putMultipart writes key as a two-part upload: the first part
// testMinPart bytes, the rest the second.
func putMultipart(t testing.TB, l *Layer, key string, body []byte) {
	t.Helper()
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, key, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := body[:testMinPart], body[testMinPart:]
	parts := []CompletePart{{Number: 1, ETag: putPart(t, l, key, id, 1, p1).ETag}, {Number: 2, ETag: putPart(t, l, key, id, 2, p2).ETag}}
	if _, err := l.CompleteMultipart(ctx, testBucket, key, id, parts, CompleteOptions{}); err != nil {
		t.Fatalf("complete %s: %v", key, err)
	}
}

// checkLast asserts a read of key through l returns want (nil: not found).
func checkLast(t testing.TB, l *Layer, key string, want []byte, when string) {
	t.Helper()
	if want != nil {
		got, err := get(l, key)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: get %s through %s: %v, %d bytes; want the %d last written", when, key, l.cfg.WriterID, err, len(got), len(want))
		}
		return
	}
	if _, err := get(l, key); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("%s: get %s through %s: %v, want not found", when, key, l.cfg.WriterID, err)
	}
}

// A peer that missed the newer write takes the retried write's first
// stamp; the retry above the refusals cannot use that peer's staged shard
// any more, so the write succeeds on the others and queues the peer for
// repair under the stamp that won.
func TestSkewedRetryOverPartialCommit(t *testing.T) {
	ahead, fc := newTestLayer(t, skewed("gw-ahead", 30*time.Second))
	var queued []RepairItem
	behind := layerOn(t, fc, skewed("gw-behind", -30*time.Second), func(c *Config) {
		c.Repair = func(it RepairItem) { queued = append(queued, it) }
	})
	peers := placementPeers(fc, "k", 6)
	peers[5].setFault(faultDown)
	put(t, ahead, "k", []byte("ahead"))
	peers[5].setFault(faultNone)
	body := randBytes(3, 2*testBlock)
	put(t, behind, "k", body)
	mustGet(t, ahead, "k", body)
	won := peers[0].held(testBucket, "k").Stamp
	if held := peers[5].held(testBucket, "k"); held == nil || held.Stamp.Writer != "gw-behind" || !held.Stamp.Less(won) {
		t.Fatalf("peer that missed the first write holds %+v, want the retried write under its first stamp", held)
	}
	if len(queued) != 1 || queued[0].Stamp != won || !slices.Equal(queued[0].Shards, []int{5}) {
		t.Fatalf("repairs queued %+v, want shard 5 under %v", queued, won)
	}
}

// Peers that refuse as stale without naming what they hold (older peers)
// give the writer nothing to stamp above: the write fails, never answers
// success for a version no read would return.
func TestStaleRefusalIsNoAcknowledgement(t *testing.T) {
	ahead, fc := newTestLayer(t, skewed("gw-ahead", 30*time.Second))
	behind := layerOn(t, fc, skewed("gw-behind", -30*time.Second))
	for _, p := range fc.peers {
		p.plainStale = true
	}
	put(t, ahead, "k", []byte("ahead"))
	for _, body := range [][]byte{[]byte("behind"), randBytes(4, 2*testBlock)} {
		_, err := behind.PutObject(context.Background(), testBucket, "k", bytes.NewReader(body), int64(len(body)), PutOptions{})
		wantErr(t, err, ErrQuorum)
		mustGet(t, ahead, "k", []byte("ahead"))
	}
}
