package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestClusterClockSkewWritesInOrder: two gateway processes whose clocks
// are 60 s apart (TESSERA_CLOCK_OFFSET=+30s and -30s) and six peers. Writes
// to the same keys alternate between the gateways, each starting once the
// one before was acknowledged; after every write a GET answers exactly the
// bytes last acknowledged (a delete: NoSuchKey), so writes never reorder.
// Each key is written by the gateway ahead, then at once by the one
// behind. Reads go through the writer, and every third write through the
// other gateway too: the next writer then learns of the newer stamp either
// from that read or, otherwise, from its peers refusing its commit as
// stale.
//
// TESSERA_SKEW_WRITES sets the number of writes (default 200).
func TestClusterClockSkewWritesInOrder(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts eight tessera processes; run without -short")
	}
	writes := 200
	if v := os.Getenv("TESSERA_SKEW_WRITES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("TESSERA_SKEW_WRITES=%q: want a number of writes >= 2", v)
		}
		writes = n
	}
	_, _, ma, mb := startTwoGatewaysEnv(t, []string{"TESSERA_CLOCK_OFFSET=30s"}, []string{"TESSERA_CLOCK_OFFSET=-30s"})
	ctx := context.Background()
	const bucket = "skew"
	makeBucketSoon(t, ma, bucket)
	gws := []struct {
		name string
		mc   *minio.Client
		lat  []time.Duration
	}{{name: "gateway +30s", mc: ma}, {name: "gateway -30s", mc: mb}}
	// Small bodies live in their records, larger ones in shard files.
	sizes := []int{1 << 10, 40 << 10, 300 << 10}
	last := map[string][]byte{}
	start := time.Now()
	for i := range writes {
		w, other := &gws[i%2], &gws[(i+1)%2]
		// Each key is written twice in a row, first through the gateway
		// ahead, then through the one behind: the write at risk.
		key := fmt.Sprintf("k%d", i/2%5)
		var want []byte // nil: deleted
		began := time.Now()
		if i%10 == 9 {
			if err := w.mc.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatalf("write %d: delete %s through %s: %v", i, key, w.name, err)
			}
		} else {
			want = payload(int64(i), sizes[i%len(sizes)])
			if _, err := w.mc.PutObject(ctx, bucket, key, bytes.NewReader(want), int64(len(want)), minio.PutObjectOptions{}); err != nil {
				t.Fatalf("write %d: put %s through %s: %v", i, key, w.name, err)
			}
		}
		w.lat = append(w.lat, time.Since(began))
		last[key] = want
		readers := []*minio.Client{w.mc}
		if i%3 == 0 {
			readers = append(readers, other.mc)
		}
		for j, r := range readers {
			via := []string{w.name, other.name}[j]
			if err := lastWritten(ctx, r, bucket, key, want); err != nil {
				t.Fatalf("write %d of %s by %s, read through %s: %v", i, key, w.name, via, err)
			}
		}
	}
	for _, g := range gws {
		for key, want := range last {
			if err := lastWritten(ctx, g.mc, bucket, key, want); err != nil {
				t.Fatalf("at the end, %s through %s: %v", key, g.name, err)
			}
		}
		slices.Sort(g.lat)
		t.Logf("%s: %d writes, median %v, p99 %v, max %v", g.name, len(g.lat),
			g.lat[len(g.lat)/2], g.lat[len(g.lat)*99/100], g.lat[len(g.lat)-1])
	}
	t.Logf("%d sequential writes alternating between gateways 60 s apart in %v: none reordered", writes, time.Since(start).Round(time.Millisecond))
}

// lastWritten checks that key reads as want through mc, or is absent when
// want is nil.
func lastWritten(ctx context.Context, mc *minio.Client, bucket, key string, want []byte) error {
	obj, err := mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if want == nil {
		if code := minio.ToErrorResponse(err).Code; code != "NoSuchKey" {
			return fmt.Errorf("deleted key: %d bytes, err %v; want NoSuchKey", len(got), err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%d bytes that are not the %d last acknowledged", len(got), len(want))
	}
	return nil
}
