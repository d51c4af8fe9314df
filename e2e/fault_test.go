package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"
)

// faultObjects writes objects of every interesting shape (inline, one block,
// many blocks, multipart) and returns their contents by key.
func faultObjects(t *testing.T, c *cluster, bucket string) map[string][]byte {
	t.Helper()
	mustMakeBucket(t, c, bucket)
	want := map[string][]byte{}
	for i, size := range []int{0, 1, 4 << 10, 128<<10 + 1, testBlockSize - 1, testBlockSize + 1, 3*testBlockSize + 99} {
		key := fmt.Sprintf("dir/obj-%d", size)
		want[key] = payload(int64(100+i), size)
		mustPut(t, c, bucket, key, want[key], minio.PutObjectOptions{})
	}
	big := payload(200, 11<<20) // minio-go sends this as one PUT; use Core for real multipart
	ctx := context.Background()
	id, err := c.core.NewMultipartUpload(ctx, bucket, "multi", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []minio.CompletePart
	for i, off := 0, 0; off < len(big); i, off = i+1, off+5<<20 {
		end := min(off+5<<20, len(big))
		p, err := c.core.PutObjectPart(ctx, bucket, "multi", id, i+1, bytes.NewReader(big[off:end]), int64(end-off), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: i + 1, ETag: p.ETag})
	}
	if _, err := c.core.CompleteMultipartUpload(ctx, bucket, "multi", id, parts, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	want["multi"] = big
	return want
}

// checkAll reads every object back, whole and by range, and lists them.
func checkAll(t *testing.T, c *cluster, bucket string, want map[string][]byte) {
	t.Helper()
	for key, data := range want {
		if got := mustGet(t, c, bucket, key, minio.GetObjectOptions{}); !bytes.Equal(got, data) {
			t.Errorf("%s: GET returned %d bytes that differ from the %d written", key, len(got), len(data))
		}
		if len(data) > 10 {
			var o minio.GetObjectOptions
			_ = o.SetRange(int64(len(data)/2), int64(len(data)-1))
			if got := mustGet(t, c, bucket, key, o); !bytes.Equal(got, data[len(data)/2:]) {
				t.Errorf("%s: range GET differs", key)
			}
		}
		st, err := c.mc.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
		if err != nil || st.Size != int64(len(data)) {
			t.Errorf("%s: stat size %d err %v", key, st.Size, err)
		}
	}
	n := 0
	for o := range c.mc.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list: %v", o.Err)
		}
		if _, ok := want[o.Key]; !ok {
			t.Errorf("list: unexpected key %q", o.Key)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("list returned %d keys, want %d", n, len(want))
	}
}

// TestWipedPeers removes everything two of six peers hold, under the running
// server: every object must still read back byte-exact.
func TestWipedPeers(t *testing.T) {
	c := startServer(t)
	want := faultObjects(t, c, "wiped")
	for _, p := range []string{"peer2", "peer5"} {
		entries, err := os.ReadDir(filepath.Join(c.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(c.dir, p, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkAll(t, c, "wiped", want)
	// Writes and overwrites still succeed with two peers' disks gone.
	mustPut(t, c, "wiped", "after", []byte("still writable"), minio.PutObjectOptions{})
	if got := mustGet(t, c, "wiped", "after", minio.GetObjectOptions{}); string(got) != "still writable" {
		t.Fatalf("write after wipe: %q", got)
	}
}

// TestCorruptPeers flips bytes in every file of two of six peers — shard
// files and metadata records alike. Reads must come back byte-exact from
// the four healthy peers, and never with wrong bytes.
func TestCorruptPeers(t *testing.T) {
	c := startServer(t)
	want := faultObjects(t, c, "corrupt")
	flipped := 0
	for _, p := range []string{"peer1", "peer4"} {
		err := filepath.WalkDir(filepath.Join(c.dir, p), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil || len(b) == 0 {
				return err
			}
			for _, at := range []int{0, len(b) / 3, len(b) / 2, len(b) - 1} {
				b[at] ^= 0x5a
			}
			flipped++
			return os.WriteFile(path, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if flipped < 2*len(want) {
		t.Fatalf("corrupted only %d files; the test is not exercising every object", flipped)
	}
	checkAll(t, c, "corrupt", want)
}

// TestCorruptBeyondParity corrupts three of six peers of a 4+2 object: the
// read must fail rather than return wrong bytes.
func TestCorruptBeyondParity(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "lost")
	data := payload(9, 2*testBlockSize)
	mustPut(t, c, "lost", "x", data, minio.PutObjectOptions{})
	for _, p := range []string{"peer1", "peer2", "peer3"} {
		_ = filepath.WalkDir(filepath.Join(c.dir, p, "buckets"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || filepath.Base(path) == "meta" || filepath.Ext(path) == ".meta" {
				return err
			}
			b, _ := os.ReadFile(path)
			if len(b) > 100 {
				b[len(b)/2] ^= 0xff
				_ = os.WriteFile(path, b, 0o644)
			}
			return nil
		})
	}
	obj, err := c.mc.GetObject(context.Background(), "lost", "x", minio.GetObjectOptions{})
	if err != nil {
		return
	}
	defer obj.Close()
	got, err := readAllLimited(obj, len(data))
	if err == nil && !bytes.Equal(got, data) {
		t.Fatal("a read with more than m corrupt shards returned wrong bytes without an error")
	}
	if err == nil {
		t.Log("read succeeded: the corrupted halves did not overlap enough to defeat the code")
	}
}
