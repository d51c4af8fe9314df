package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	tcluster "tessera/cluster"
	"tessera/meta"
)

// TestClusterCapacityStoredBytes: six peers of 1,1,2,2,3,3 GiB balance
// their ring for three shards per object (--ring-width 3) and the gateway
// writes with a 2+1 code. Under the settled epoch each peer's expected
// share of stored shards, computed exactly from the ring, is within 10% of
// its capacity fraction; and the bytes each peer really stores for 300
// equal-sized objects are what that ring's placement assigns it. (300
// objects are too few to compare the measured bytes with the capacity
// fraction to 10% directly: a 1/12 peer holds about 75 shards, whose
// binomial spread alone is about 11%.)
func TestClusterCapacityStoredBytes(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts seven tessera processes; run without -short")
	}
	c := newProcCluster(t)
	gw := c.startGateway("--ec", "2+1")
	caps := []int{1, 1, 2, 2, 3, 3}
	for _, g := range caps {
		c.startPeer("--capacity", fmt.Sprintf("%dGiB", g), "--ring-width", "3")
	}
	c.waitAlive(6)
	e := settledEpoch(t, c, 6)
	c.waitEpoch(6)
	r, err := e.Ring()
	if err != nil {
		t.Fatal(err)
	}
	expected := r.StoredShares(3)
	ids := make([]meta.PeerID, len(c.peers))
	for i, p := range c.peers {
		ids[i] = meta.PeerID(peerID(t, p))
		want := float64(caps[i]) / 12
		got := expected[ids[i]]
		t.Logf("%s: capacity %d GiB, vnodes %d, first-choice share %.4f, expected stored %.4f (capacity fraction %.4f)",
			c.peers[i].name, caps[i], r.Vnodes(ids[i]), r.Share(ids[i]), got, want)
		if math.Abs(got-want) > 0.10*want {
			t.Errorf("%s: expected stored fraction %.4f, want %.4f ±10%%", c.peers[i].name, got, want)
		}
	}

	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	ctx := context.Background()
	const bucket, objects, size = "capacity", 300, 160 << 10 // above the inline limit
	makeBucketSoon(t, mc, bucket)
	assigned := make([]int, len(ids))
	keys := make([]string, objects)
	for i := range keys {
		keys[i] = fmt.Sprintf("obj/%03d", i)
		data := payload(int64(i), size)
		if _, err := mc.PutObject(ctx, bucket, keys[i], bytes.NewReader(data), size, minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", keys[i], err)
		}
		place, err := r.Placement(bucket+"/"+keys[i], 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range place {
			assigned[slices.Index(ids, id)]++
		}
	}
	if again, ok := epochSettled(c.peers, 6); !ok || again.Number != e.Number {
		t.Fatalf("epoch moved from %d to %d during the writes", e.Number, again.Number)
	}
	waitUntil(t, 60*time.Second, "every object complete on three peers", func() bool {
		for _, key := range keys {
			if shardsComplete(c.peers, bucket, key, 3) != "" {
				return false
			}
		}
		return true
	})
	stored := make([]int64, len(c.peers))
	var total int64
	for i, p := range c.peers {
		stored[i] = dirBytes(t, filepath.Join(p.dir, "buckets", bucket))
		total += stored[i]
	}
	for i, p := range c.peers {
		got := float64(stored[i]) / float64(total)
		placed := float64(assigned[i]) / (3 * objects)
		t.Logf("%s: %d shards by placement (%.4f), %d bytes stored (%.4f), capacity fraction %.4f",
			p.name, assigned[i], placed, stored[i], got, float64(caps[i])/12)
		// Every shard is the same size; only the small record per shard
		// and the directory layout differ from a pure shard count.
		if math.Abs(got-placed) > 0.01 {
			t.Errorf("%s stores %.4f of the bytes, its placement %.4f", p.name, got, placed)
		}
	}
}

// settledEpoch waits until every peer holds one epoch naming n peers and
// it stays put for more than two proposer intervals.
func settledEpoch(t *testing.T, c *procCluster, n int) tcluster.Epoch {
	t.Helper()
	var e tcluster.Epoch
	for range 5 {
		waitUntil(t, 60*time.Second, fmt.Sprintf("the %d peers agree on an epoch", n), func() bool {
			var ok bool
			e, ok = epochSettled(c.peers, n)
			return ok
		})
		time.Sleep(5 * time.Second)
		if again, ok := epochSettled(c.peers, n); ok && again.Number == e.Number {
			return e
		}
	}
	t.Fatalf("the epoch kept moving (last %d)", e.Number)
	return e
}

// dirBytes sums the sizes of the regular files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var sum int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum += fi.Size()
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return sum
}
