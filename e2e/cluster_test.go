package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"tessera/meta"
	"tessera/storage"
)

// objectSet is what a test wrote: key → content hash (absent: deleted).
type objectSet struct {
	bucket  string
	live    map[string][32]byte
	deleted map[string]bool
}

func newObjectSet(bucket string) *objectSet {
	return &objectSet{bucket: bucket, live: map[string][32]byte{}, deleted: map[string]bool{}}
}

// clusterSizes mixes inlined objects with one-block and multi-block ones.
var clusterSizes = []int{2 << 10, 60 << 10, 300 << 10, 1<<20 + 4321}

func (s *objectSet) put(ctx context.Context, t testing.TB, mc *minio.Client, key string, seed int64) {
	t.Helper()
	data := payload(seed, clusterSizes[int(seed)%len(clusterSizes)])
	ctx, cancel := context.WithTimeout(ctx, opLimit)
	defer cancel()
	start := time.Now()
	if _, err := mc.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put %s: after %v: %v", key, time.Since(start).Round(time.Millisecond), err)
	}
	s.live[key] = sha256.Sum256(data)
	delete(s.deleted, key)
}

func (s *objectSet) remove(ctx context.Context, t testing.TB, mc *minio.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, opLimit)
	defer cancel()
	start := time.Now()
	if err := mc.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete %s: after %v: %v", key, time.Since(start).Round(time.Millisecond), err)
	}
	delete(s.live, key)
	s.deleted[key] = true
}

// verify reads every live object back byte-exact and checks that every
// deleted one stays deleted.
func (s *objectSet) verify(ctx context.Context, t testing.TB, mc *minio.Client) {
	t.Helper()
	start := time.Now()
	for key, want := range s.live {
		if err := s.getOne(ctx, mc, key, want); err != nil {
			t.Fatalf("get %s: %v (verify of %d live keys started %v ago)", key, err, len(s.live), time.Since(start).Round(time.Millisecond))
		}
	}
	for key := range s.deleted {
		octx, cancel := context.WithTimeout(ctx, opLimit)
		_, err := mc.StatObject(octx, s.bucket, key, minio.StatObjectOptions{})
		cancel()
		if minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Fatalf("deleted %s: stat err = %v, want NoSuchKey", key, err)
		}
	}
}

// opLimit bounds one client call, retries included: minio-go retries a
// request up to 10 times and waits up to a minute for each response's
// headers (its transport's ResponseHeaderTimeout), with no bound at all
// on a body, so a call the gateway never answers would otherwise hold a
// scenario silently for many minutes.
const opLimit = time.Minute

// getOne reads key back and compares it with want, within opLimit.
func (s *objectSet) getOne(ctx context.Context, mc *minio.Client, key string, want [32]byte) error {
	ctx, cancel := context.WithTimeout(ctx, opLimit)
	defer cancel()
	t0 := time.Now()
	obj, err := mc.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	h := sha256.New()
	n, err := io.Copy(h, obj)
	if err != nil {
		return fmt.Errorf("after %d bytes and %v: %w", n, time.Since(t0).Round(time.Millisecond), err)
	}
	if got := [32]byte(h.Sum(nil)); got != want {
		return errors.New("content differs from what was written")
	}
	return nil
}

// redundancy checks, from the peers' directories, that every key written
// is held by every one of its n peers: the same version everywhere, each
// peer with its own shard index and every part file of the same size.
// It returns a description of the first shortfall, "" when there is none.
func (s *objectSet) redundancy(peers []*proc, n int) string {
	var keys []string
	for _, set := range []map[string]bool{s.keySet(), s.deleted} {
		for key := range set {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	held, msg := inspectPeers(peers, s.bucket, keys)
	if msg != "" {
		return msg
	}
	for _, key := range keys {
		if msg := complete(peers, held, key, n); msg != "" {
			return msg
		}
	}
	return ""
}

func (s *objectSet) keySet() map[string]bool {
	out := map[string]bool{}
	for k := range s.live {
		out[k] = true
	}
	return out
}

// shardsComplete reports "" when the peers hold n distinct shards of one
// version of bucket/key with part files of equal sizes, else what is off.
func shardsComplete(peers []*proc, bucket, key string, n int) string {
	held, msg := inspectPeers(peers, bucket, []string{key})
	if msg != "" {
		return msg
	}
	return complete(peers, held, key, n)
}

// inspectPeers reads what each peer's directory holds for keys, each
// peer's index once (storage.InspectKeys); a failure is its message.
func inspectPeers(peers []*proc, bucket string, keys []string) ([]map[string]storage.Inspection, string) {
	held := make([]map[string]storage.Inspection, len(peers))
	for i, p := range peers {
		m, err := storage.InspectKeys(p.dir, bucket, keys)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", p.name, err)
		}
		held[i] = m
	}
	return held, ""
}

// complete is shardsComplete over what inspectPeers read.
func complete(peers []*proc, held []map[string]storage.Inspection, key string, n int) string {
	var want *meta.Object
	var size []int64
	seen := map[int]bool{}
	var who []string // each peer and the shard it holds, for the message
	for i, p := range peers {
		in := held[i][key]
		o, files := in.Object, in.Files
		if o == nil {
			who = append(who, p.name+":none")
			continue
		}
		who = append(who, fmt.Sprintf("%s:%d", p.name, o.ShardIndex))
		if want != nil && o.Stamp != want.Stamp {
			return fmt.Sprintf("%s: %s holds %v, another peer %v", key, p.name, o.Stamp, want.Stamp)
		}
		if want == nil {
			want = o
			for _, f := range files {
				size = append(size, f.Size)
			}
		}
		for i, f := range files {
			if f.Size < 0 || f.Size != size[i] {
				return fmt.Sprintf("%s on %s: part %d file of %d bytes", key, p.name, f.Part, f.Size)
			}
		}
		seen[o.ShardIndex] = true
	}
	if len(seen) != n {
		return fmt.Sprintf("%s: %d of %d shards held (%s)", key, len(seen), n, strings.Join(who, " "))
	}
	return ""
}

// TestClusterKillAndRepair: six peer processes and a gateway. Two peers
// are killed with SIGKILL; every object still reads, writes, overwrites
// and deletes go on; once the two are back, repair restores every object
// to all six peers, so that killing two other peers loses nothing.
func TestClusterKillAndRepair(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("starts seven tessera processes; run without -short")
	}
	const bucket = "cluster"
	c, mc, set := bootLoaded(t, 6, bucket, 200)
	ctx := context.Background()
	if msg := set.redundancy(c.peers, 6); msg != "" {
		t.Fatalf("before any failure: %s", msg)
	}
	// Each step is logged as it ends, so a failure or a hang shows which
	// step it was in and how long the ones before took.
	begun := time.Now()
	step := func(what string) { t.Logf("%s done, %v in", what, time.Since(begun).Round(time.Millisecond)) }

	c.kill(c.peers[0])
	c.kill(c.peers[1])
	step("kill peer1, peer2")
	set.verify(ctx, t, mc)
	step("reads with two peers down")
	// Writes keep succeeding with two peers down: new keys, overwrites
	// and deletes, all of which miss the two dead peers.
	for i := range 30 {
		set.put(ctx, t, mc, fmt.Sprintf("degraded/%03d", i), int64(1000+i))
	}
	for i := range 10 {
		set.put(ctx, t, mc, fmt.Sprintf("obj/%03d", i), int64(2000+i))
	}
	for i := 190; i < 200; i++ {
		set.remove(ctx, t, mc, fmt.Sprintf("obj/%03d", i))
	}
	step("writes and deletes with two peers down")
	set.verify(ctx, t, mc)
	step("reads after them")
	msg := set.redundancy(c.peers, 6)
	if msg == "" {
		t.Fatal("objects written with two peers down are fully redundant: the test cannot tell repair happened")
	}
	step("redundancy check (" + msg + ")")

	c.start(c.peers[0])
	c.start(c.peers[1])
	c.waitServing(c.peers[0])
	c.waitServing(c.peers[1])
	c.waitAlive(6)
	step("peer1, peer2 back")
	waitFor(t, 120*time.Second, "repair restores all six shards of every object", func() error {
		if msg := set.redundancy(c.peers, 6); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
	step("repair")

	c.kill(c.peers[2])
	c.kill(c.peers[3])
	set.verify(ctx, t, mc)
}

// TestClusterTwoGateways: two gateway processes on one cluster. What one
// writes, the other reads and lists at once, and an overwrite or delete
// through one is never undone by the other.
func TestClusterTwoGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("starts eight tessera processes; run without -short")
	}
	_, _, ma, mb := startTwoGateways(t)
	ctx := context.Background()
	const bucket = "twogw"
	makeBucketSoon(t, ma, bucket)
	clients := []*minio.Client{ma, mb}
	for i := range 40 {
		key := fmt.Sprintf("k%02d", i%8) // each key is written five times
		w, r := clients[i%2], clients[(i+1)%2]
		data := payload(int64(i), clusterSizes[i%len(clusterSizes)])
		if _, err := w.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		obj, err := r.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("write %d of %s through one gateway, read through the other: %d bytes, err %v", i, key, len(got), err)
		}
		if !listed(ctx, t, r, bucket, key) {
			t.Fatalf("write %d: %s not listed through the other gateway", i, key)
		}
		if i%5 == 4 {
			if err := r.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, m := range clients {
				if _, err := m.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
					t.Fatalf("deleted %s: stat err = %v", key, err)
				}
				if listed(ctx, t, m, bucket, key) {
					t.Fatalf("deleted %s still listed", key)
				}
			}
		}
	}
}

func listed(ctx context.Context, t testing.TB, mc *minio.Client, bucket, key string) bool {
	t.Helper()
	found := false
	var err error
	// Drained to the end: leaving early would strand the client's lister.
	for o := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			err = o.Err
		}
		found = found || o.Key == key
	}
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return found
}
