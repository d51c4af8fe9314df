package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// Objects written through one gateway as soon as the cluster takes
// writes — before the peers have minted their first ring epoch — read
// back through the other gateway, byte-exact, all the while the first
// epoch is adopted and data moves to its placement. The peers' unequal
// capacities make that placement differ from the membership ring's, so
// reads must find objects where they were written until they move.
//
// It failed about one run in five while a first epoch minted before the
// sixth peer was seen left a ring too narrow for the 4+2 code and reads
// asked no placement at all (object TestReadsWhenEpochNarrowerThanCode
// pins the fix). Whether a run hits that window depends on timing, so it
// runs as an opt-in soak:
//
//	TESSERA_REPRO_EPOCH_READS=1 go test ./e2e -run ReadsAcrossFirstEpoch -count=10
func TestClusterReadsAcrossFirstEpoch(t *testing.T) {
	if os.Getenv("TESSERA_REPRO_EPOCH_READS") == "" {
		t.Skip("timing-dependent soak of reads across the first epoch (about 17 s a run); set TESSERA_REPRO_EPOCH_READS=1 to run")
	}
	c := newProcCluster(t)
	a := c.startGateway()
	b := c.startGateway()
	for _, gib := range []int{1, 1, 2, 2, 3, 3} {
		c.startPeer("--capacity", fmt.Sprintf("%dGiB", gib))
	}
	c.waitAlive(6)
	ma, _ := newMinio(t, a.api, c.access, c.secret)
	mb, _ := newMinio(t, b.api, c.access, c.secret)
	ctx := context.Background()
	const bucket = "firstepoch"
	makeBucketSoon(t, ma, bucket)
	epochAt := func() int {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.epochN
	}
	t.Logf("epoch peers before the writes: %d", epochAt())
	objs := map[string][]byte{}
	for i := range 30 {
		key := fmt.Sprintf("k%02d", i)
		objs[key] = payload(int64(i), clusterSizes[i%len(clusterSizes)])
		if _, err := ma.PutObject(ctx, bucket, key, bytes.NewReader(objs[key]), int64(len(objs[key])), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	t.Logf("epoch peers after the writes: %d", epochAt())
	readAll := func(round int) {
		for key, data := range objs {
			obj, err := mb.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatalf("round %d: get %s: %v", round, key, err)
			}
			got, err := io.ReadAll(obj)
			obj.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("round %d: %s through the other gateway: %d bytes, err %v", round, key, len(got), err)
			}
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	round := 0
	for ; time.Now().Before(deadline); round++ {
		readAll(round)
	}
	waitUntil(t, 30*time.Second, "the second gateway adopts an epoch of six peers", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.epochN == 6
	})
	readAll(round)
}
