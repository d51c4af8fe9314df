package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"tessera/meta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ctx = context.Background()

func openAt(t *testing.T, dir string) *Store {
	t.Helper()
	return openWith(t, dir, DefaultConfig())
}

// newStore opens a store in a fresh dir with bucket "bkt".
func newStore(t *testing.T) *Store {
	t.Helper()
	s := openAt(t, t.TempDir())
	mustMakeBucket(t, s, "bkt")
	return s
}

func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	s.Close()
	return openAt(t, s.Dir())
}

func mustMakeBucket(t *testing.T, s *Store, name string) {
	t.Helper()
	if err := s.MakeBucket(ctx, meta.Bucket{Name: name, Created: time.Unix(1, 0).UTC()}); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
}

func stamp(nanos int64, writer string) meta.Stamp { return meta.Stamp{Nanos: nanos, Writer: writer} }

// object returns a record with one part per payload (none: a tombstone).
func object(bucket, key string, st meta.Stamp, parts ...[]byte) *meta.Object {
	o := &meta.Object{Bucket: bucket, Key: key, Stamp: st, Code: meta.Code{K: 1, M: 0},
		ModTime: time.Unix(0, st.Nanos).UTC(), ETag: fmt.Sprintf("etag-%d", st.Nanos)}
	if len(parts) == 0 {
		o.Deleted = true
	}
	for i, p := range parts {
		o.Parts = append(o.Parts, meta.Part{Number: i + 1, Size: int64(len(p)), ETag: fmt.Sprintf("p%d", i+1)})
		o.Size += int64(len(p))
	}
	return o
}

func inlined(bucket, key string, st meta.Stamp, data []byte) *meta.Object {
	o := object(bucket, key, st, data)
	o.Inlined, o.Inline = true, data
	return o
}

func stage(t *testing.T, s *Store, data []byte) string {
	t.Helper()
	id, err := s.StageShard(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	return id
}

// put stages parts and commits them under st.
func put(t *testing.T, s *Store, bucket, key string, st meta.Stamp, parts ...[]byte) error {
	t.Helper()
	o := object(bucket, key, st, parts...)
	var ids []string
	for _, p := range parts {
		ids = append(ids, stage(t, s, p))
	}
	return s.Commit(ctx, o, ids)
}

func readShard(t *testing.T, s *Store, bucket, key string, st meta.Stamp, part int) ([]byte, error) {
	t.Helper()
	rc, n, err := s.OpenShard(ctx, bucket, key, st, part, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err == nil && int64(len(b)) != n {
		err = fmt.Errorf("read %d bytes, announced %d", len(b), n)
	}
	return b, err
}

// dataDirs lists the version dirs present for a key.
func dataDirs(t *testing.T, s *Store, bucket, key string) []string {
	t.Helper()
	ents, err := os.ReadDir(s.objDir(bucket, key))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// settle settles version st of bucket/key, as a gateway does once the
// version is on a write quorum.
func settle(t *testing.T, s *Store, bucket, key string, st meta.Stamp) {
	t.Helper()
	if err := s.Settle(ctx, bucket, key, st); err != nil {
		t.Fatalf("settle %s/%s %v: %v", bucket, key, st, err)
	}
}

func tmpEntries(t *testing.T, s *Store) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.Dir(), ".tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }
