package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"tessera/server"
	"tessera/storage"
)

// TestEmbeddedDeletesLeaveNothing: on `tessera server`, deleting every
// object of a bucket leaves no record and no per-object file on any peer
// once the grace periods have passed, so the emptied bucket lists without
// skipping a tombstone. The server collects tombstones itself: no flag
// but the two grace periods, shortened here.
func TestEmbeddedDeletesLeaveNothing(t *testing.T) {
	c := startServer(t, func(cfg *server.EmbeddedConfig) {
		cfg.Repair.TombstoneGrace = 2 * time.Second
		cfg.RetireGrace = time.Second
	})
	const bucket = "emptied"
	mustMakeBucket(t, c, bucket)
	base := dataFiles(t, c.dir)
	ctx := context.Background()
	var keys []string
	for i := range 300 {
		size := 200 // inlined in the record
		if i%50 == 0 {
			size = 3*testBlockSize + 17 // shard files on every peer
		}
		key := fmt.Sprintf("d%02d/f%04d", i%10, i)
		mustPut(t, c, bucket, key, payload(int64(i), size), minio.PutObjectOptions{})
		keys = append(keys, key)
	}
	if n := dataFiles(t, c.dir); n <= base {
		t.Fatalf("%d files under the data dir after the writes, %d before: the large objects left none", n, base)
	}
	objs := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objs <- minio.ObjectInfo{Key: k}
	}
	close(objs)
	for r := range c.mc.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{}) {
		t.Fatalf("delete %s: %v", r.ObjectName, r.Err)
	}
	deleted := time.Now()
	waitUntil(t, time.Minute, "no record and no object file left on any peer", func() bool {
		for i := 1; i <= 6; i++ {
			n, err := storage.CountRecords(filepath.Join(c.dir, fmt.Sprintf("peer%d", i)))
			if err != nil || n > 0 {
				return false
			}
		}
		return dataFiles(t, c.dir) == base
	})
	t.Logf("every record and file gone %.1f s after the deletes", time.Since(deleted).Seconds())
	start := time.Now()
	for o := range c.mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Fatalf("listed %q (err %v) in the emptied bucket", o.Key, o.Err)
	}
	t.Logf("emptied bucket listed in %s", time.Since(start))
	if _, err := c.mc.PutObject(ctx, bucket, keys[0], bytes.NewReader([]byte("again")), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("write a collected key again: %v", err)
	}
	if got := mustGet(t, c, bucket, keys[0], minio.GetObjectOptions{}); string(got) != "again" {
		t.Fatalf("collected key written again reads %q", got)
	}
}

// dataFiles counts the regular files under dir outside the peers'
// indexes: shard files and whatever else an object leaves behind.
func dataFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "index":
			return filepath.SkipDir
		case d.Type().IsRegular():
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return n
}
