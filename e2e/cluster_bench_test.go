package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// benchClusterMiB is how much data the cluster benchmarks move
// (TESSERA_BENCH_MIB, default 256).
func benchClusterMiB() int {
	if n, err := strconv.Atoi(os.Getenv("TESSERA_BENCH_MIB")); err == nil && n > 0 {
		return n
	}
	return 256
}

// benchWrite fills the cluster with mib MiB in 4 MiB objects.
func benchWrite(b *testing.B, mc *minio.Client, set *objectSet, prefix string, mib int) {
	ctx := context.Background()
	for i := range mib / 4 {
		data := payload(int64(i), 4<<20)
		if _, err := mc.PutObject(ctx, set.bucket, fmt.Sprintf("%s/%04d", prefix, i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			b.Fatal(err)
		}
		set.live[fmt.Sprintf("%s/%04d", prefix, i)] = sha256.Sum256(data)
	}
}

func benchCluster(b *testing.B) (*procCluster, *minio.Client, *objectSet) {
	c := newProcCluster(b)
	gw := c.startGateway()
	for range 6 {
		c.startPeer()
	}
	c.waitAlive(6)
	c.waitEpoch(6)
	mc, _ := newMinio(b, gw.api, c.access, c.secret)
	set := newObjectSet("bench")
	waitUntil(b, 30*time.Second, "bucket", func() bool {
		return mc.MakeBucket(context.Background(), "bench", minio.MakeBucketOptions{}) == nil
	})
	return c, mc, set
}

// BenchmarkClusterRepair: data written while two of six peers are down
// (4+2), then the time from their restart until every object is back on
// all six peers. Reports seconds per GiB written.
func BenchmarkClusterRepair(b *testing.B) {
	mib := benchClusterMiB()
	for range b.N {
		c, mc, set := benchCluster(b)
		c.kill(c.peers[0])
		c.kill(c.peers[1])
		benchWrite(b, mc, set, "degraded", mib)
		start := time.Now()
		c.start(c.peers[0])
		c.start(c.peers[1])
		waitUntil(b, 30*time.Minute, "repaired", func() bool { return set.redundancy(c.peers, 6) == "" })
		d := time.Since(start)
		b.ReportMetric(d.Seconds()/(float64(mib)/1024), "s/GiB")
		b.Logf("repaired %d MiB (two missing shards of each object) in %v", mib, d)
		c.stopAll()
	}
}

// BenchmarkClusterRebalance: a seventh peer joins six holding mib MiB;
// the time from its start until every object sits on its new placement.
func BenchmarkClusterRebalance(b *testing.B) {
	mib := benchClusterMiB()
	for range b.N {
		c, mc, set := benchCluster(b)
		benchWrite(b, mc, set, "data", mib)
		start := time.Now()
		c.startPeer()
		waitUntil(b, 5*time.Minute, "new epoch", func() bool { _, ok := epochSettled(c.peers, 7); return ok })
		final, _ := epochSettled(c.peers, 7)
		r, err := final.Ring()
		if err != nil {
			b.Fatal(err)
		}
		waitUntil(b, 30*time.Minute, "moved", func() bool {
			for key := range set.live {
				hs := holders(c.peers, set.bucket, key)
				want, _ := r.Placement(set.bucket+"/"+key, 6)
				if len(hs) != 6 || !sameMembers(hs[0].Distribution, want) {
					return false
				}
			}
			return true
		})
		d := time.Since(start)
		b.ReportMetric(d.Seconds()/(float64(mib)/1024), "s/GiB")
		b.Logf("rebalanced %d MiB onto a seventh peer in %v (epoch wait included)", mib, d)
		c.stopAll()
	}
}
