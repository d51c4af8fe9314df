package e2e

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/minio/minio-go/v7"

	"tessera/sched"
)

// Every GET goes through the gateway's fetch pool under the policy in
// force: an inlined object, an ordinary one and one whose 6 MiB chunks
// are read in windows all show in the scheduler's figures, under each
// policy the gateway accepts.
func TestSchedGovernsEveryGet(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "schedpaths")
	objects := []struct {
		key   string
		size  int
		reads uint64 // pool reads per GET
	}{
		{"inlined", 4 << 10, 1},
		{"pooled", 1 << 20, 1},
		{"windowed", 24 << 20, 4}, // 6 MiB per shard: windows of 7 blocks (under 2 MiB per shard)
	}
	data := map[string][]byte{}
	for i, o := range objects {
		data[o.key] = payload(int64(i), o.size)
		mustPut(t, c, "schedpaths", o.key, data[o.key], minio.PutObjectOptions{})
	}
	gw := c.srv.Gateway()
	for _, policy := range sched.Policies() {
		if err := gw.SetSchedPolicy(policy); err != nil {
			t.Fatal(err)
		}
		for _, o := range objects {
			before := gw.SchedStatus()
			getAll(t, c, o.key, data[o.key])
			after := gw.SchedStatus()
			finished, fetches := after.Finished-before.Finished, after.Fetches-before.Fetches
			if after.Policy != policy || finished != o.reads || fetches < 4*o.reads {
				t.Errorf("%s: GET %s: policy %s, %d pool reads finished, %d fetches; want %d reads of at least 4 fetches",
					policy, o.key, after.Policy, finished, fetches, o.reads)
			}
		}
	}
}

func getAll(t *testing.T, c *cluster, key string, want []byte) {
	t.Helper()
	obj, err := c.mc.GetObject(context.Background(), "schedpaths", key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || len(got) != len(want) || fmt.Sprint(got[:16]) != fmt.Sprint(want[:16]) {
		t.Fatalf("get %s: %d bytes, %v", key, len(got), err)
	}
}
