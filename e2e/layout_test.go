package e2e

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// objectFiles counts, per peer, the regular files stored for one bucket's
// objects (bucket records excluded).
func objectFiles(t *testing.T, c *cluster, bucket string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, dir := range c.srv.PeerDirs() {
		root := filepath.Join(dir, "buckets", bucket, "obj")
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			out[filepath.Base(dir)] = append(out[filepath.Base(dir)], rel)
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	return out
}

// TestSmallObjectIsOneWrite checks that a 4 KiB object costs each peer a
// single file — its metadata record with the shard inlined — and no shard
// file, while a 1 MiB object gets a record plus one shard file per peer.
func TestSmallObjectIsOneWrite(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "small")
	mustPut(t, c, "small", "tiny", payload(1, 4<<10), minio.PutObjectOptions{})
	files := objectFiles(t, c, "small")
	if len(files) != 6 {
		t.Fatalf("a 4+2 object should touch all 6 peers, touched %d: %v", len(files), files)
	}
	for p, fl := range files {
		if len(fl) != 1 || filepath.Base(fl[0]) != "meta" {
			t.Errorf("%s holds %v for a 4 KiB object, want only its metadata record", p, fl)
		}
	}

	mustMakeBucket(t, c, "large")
	mustPut(t, c, "large", "mib", payload(2, 1<<20), minio.PutObjectOptions{})
	for p, fl := range objectFiles(t, c, "large") {
		var parts int
		for _, f := range fl {
			if strings.HasPrefix(filepath.Base(f), "part.") {
				parts++
			}
		}
		if len(fl) != 2 || parts != 1 {
			t.Errorf("%s holds %v for a 1 MiB object, want a record and one shard file", p, fl)
		}
	}
}
