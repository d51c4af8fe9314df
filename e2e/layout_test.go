package e2e

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"tessera/storage"
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
		if err != nil && !errors.Is(err, fs.ErrNotExist) { // no obj dir: nothing but inlined records
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	return out
}

// TestSmallObjectIsOneWrite checks that a 4 KiB object costs each peer no
// file at all — its record, with the shard inlined, is one write to the
// peer's index — while a 1 MiB object gets one shard file per peer.
func TestSmallObjectIsOneWrite(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "small")
	mustPut(t, c, "small", "tiny", payload(1, 4<<10), minio.PutObjectOptions{})
	if files := objectFiles(t, c, "small"); len(files) != 0 {
		t.Errorf("peers hold files for a 4 KiB object: %v", files)
	}
	inlined := 0
	for _, dir := range c.srv.PeerDirs() {
		if o, _, err := storage.Inspect(dir, "small", "tiny"); err == nil && o.Inlined {
			inlined++
		}
	}
	if inlined != 6 {
		t.Fatalf("a 4+2 object should be inlined on all 6 peers, is on %d", inlined)
	}

	mustMakeBucket(t, c, "large")
	mustPut(t, c, "large", "mib", payload(2, 1<<20), minio.PutObjectOptions{})
	files := objectFiles(t, c, "large")
	if len(files) != 6 {
		t.Fatalf("a 4+2 object should touch all 6 peers, touched %d: %v", len(files), files)
	}
	for p, fl := range files {
		if len(fl) != 1 || !strings.HasPrefix(filepath.Base(fl[0]), "part.") {
			t.Errorf("%s holds %v for a 1 MiB object, want one shard file", p, fl)
		}
	}
}
