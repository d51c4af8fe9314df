package scrub

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"tessera/erasure"
	"tessera/meta"
	"tessera/storage"
)

const (
	testBucket = "scrubbed"
	testBlock  = 4096
	testShard  = 2
)

var testCode = meta.Code{K: 4, M: 2}

// fakeClock is the scrubber's clock in tests: sleeping moves it on.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return nil
}

func openStore(t *testing.T) (*storage.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(dir, storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MakeBucket(context.Background(), meta.Bucket{Name: testBucket, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return st, dir
}

var stamps int64 = 1

// put stores shard testShard of an object made of parts of the given
// sizes (inline: one part inside the record) and returns its record.
func put(t *testing.T, st *storage.Store, key string, inline bool, sizes ...int) *meta.Object {
	t.Helper()
	ec, err := erasure.New(testCode.K, testCode.M, testBlock)
	if err != nil {
		t.Fatal(err)
	}
	stamps++
	o := &meta.Object{Bucket: testBucket, Key: key, Stamp: meta.Stamp{Nanos: stamps, Writer: "w"}, Code: testCode,
		BlockSize: testBlock, ShardIndex: testShard, ModTime: time.Now(),
		Distribution: []meta.PeerID{"p0", "p1", "p2", "p3", "p4", "p5"}}
	var staged []string
	for i, size := range sizes {
		shards, err := ec.EncodeBytes(bytes.Repeat([]byte{byte(i + len(key))}, size))
		if err != nil {
			t.Fatal(err)
		}
		o.Size += int64(size)
		if inline {
			o.Inlined, o.Inline = true, shards[testShard]
			continue
		}
		o.Parts = append(o.Parts, meta.Part{Number: i + 1, Size: int64(size)})
		id, err := st.StageShard(context.Background(), bytes.NewReader(shards[testShard]))
		if err != nil {
			t.Fatal(err)
		}
		staged = append(staged, id)
	}
	if err := st.Commit(context.Background(), o, staged); err != nil {
		t.Fatal(err)
	}
	return o
}

// files returns the store's files under buckets/ named like name.
func files(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "buckets"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasPrefix(d.Name(), name) {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func rewrite(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// damageRecord flips a bit of the record of "k" in the store's index.
func damageRecord(t *testing.T, st *storage.Store, at func(n int) int) {
	t.Helper()
	if err := st.DamageRecord(testBucket, "k", at); err != nil {
		t.Fatal(err)
	}
}

func flip(at func(n int) int) func([]byte) []byte {
	return func(b []byte) []byte { b[at(len(b))] ^= 0x10; return b }
}

func newScrubber(t *testing.T, st Store, dir string, cfg Config) (*Scrubber, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Dir, cfg.Logger, cfg.now, cfg.sleep = dir, zerolog.Nop(), clock.now, clock.sleep
	s, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, clock
}

// runPass runs one whole pass, manual (unpaced) or scheduled.
func runPass(t *testing.T, s *Scrubber, manual bool) Report {
	t.Helper()
	s.begin(manual)
	if err := s.pass(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return s.Report(100)
}

func TestVerify(t *testing.T) {
	healthy := func(t *testing.T, st *storage.Store, dir string) {}
	for _, tc := range []struct {
		name   string
		inline bool
		sizes  []int
		damage func(t *testing.T, st *storage.Store, dir string)
		shard  int // the finding's shard; -2: no finding
	}{
		{"inline", true, []int{700}, healthy, -2},
		{"empty inline", true, []int{0}, healthy, -2},
		{"one block", false, []int{3000}, healthy, -2},
		{"many blocks", false, []int{5*testBlock + 7}, healthy, -2},
		{"multipart", false, []int{2 * testBlock, testBlock + 1}, healthy, -2},
		{"flipped chunk byte", false, []int{5*testBlock + 7}, func(t *testing.T, st *storage.Store, dir string) {
			rewrite(t, files(t, dir, "part.")[0], flip(func(n int) int { return n / 2 }))
		}, testShard},
		{"flipped checksum byte", false, []int{5*testBlock + 7}, func(t *testing.T, st *storage.Store, dir string) {
			rewrite(t, files(t, dir, "part.")[0], flip(func(int) int { return 1 }))
		}, testShard},
		{"flipped second part", false, []int{2 * testBlock, testBlock + 1}, func(t *testing.T, st *storage.Store, dir string) {
			rewrite(t, files(t, dir, "part.2")[0], flip(func(n int) int { return n - 1 }))
		}, testShard},
		{"truncated", false, []int{5 * testBlock}, func(t *testing.T, st *storage.Store, dir string) {
			rewrite(t, files(t, dir, "part.")[0], func(b []byte) []byte { return b[:len(b)-10] })
		}, testShard},
		{"trailing bytes", false, []int{5 * testBlock}, func(t *testing.T, st *storage.Store, dir string) {
			rewrite(t, files(t, dir, "part.")[0], func(b []byte) []byte { return append(b, 0) })
		}, testShard},
		{"missing part", false, []int{testBlock}, func(t *testing.T, st *storage.Store, dir string) {
			if err := os.Remove(files(t, dir, "part.")[0]); err != nil {
				t.Fatal(err)
			}
		}, testShard},
		{"flipped inline byte", true, []int{700}, func(t *testing.T, st *storage.Store, dir string) {
			damageRecord(t, st, func(n int) int { return n - 10 })
		}, -1},
		{"flipped record", false, []int{testBlock}, func(t *testing.T, st *storage.Store, dir string) {
			damageRecord(t, st, func(n int) int { return n / 2 })
		}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, dir := openStore(t)
			put(t, st, "k", tc.inline, tc.sizes...)
			tc.damage(t, st, dir)
			s, _ := newScrubber(t, st, dir, Config{})
			r := runPass(t, s, true)
			if r.Last == nil || r.Last.ObjectsChecked != 1 || r.Pass != nil {
				t.Fatalf("pass: %+v", r)
			}
			if wantParts := int64(len(tc.sizes)); !tc.inline && tc.shard == -2 && r.Last.ShardsChecked != wantParts {
				t.Errorf("shards checked %d, want %d", r.Last.ShardsChecked, wantParts)
			}
			switch {
			case tc.shard == -2 && r.Pending != 0:
				t.Fatalf("healthy copy reported: %+v", r.Findings)
			case tc.shard == -2:
			case r.Pending != 1 || r.Findings[0].Key != "k" || r.Findings[0].Shard != tc.shard || r.Totals.CorruptFound != 1:
				t.Fatalf("want one finding of shard %d, got %d: %+v", tc.shard, r.Pending, r.Findings)
			}
		})
	}
}

// A finding stays until the copy is rewritten and verifies, survives a
// restart, and is dropped when the key goes away.
func TestFindingLifecycle(t *testing.T) {
	st, dir := openStore(t)
	o := put(t, st, "k", false, 3*testBlock)
	good, err := os.ReadFile(files(t, dir, "part.")[0])
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, files(t, dir, "part.")[0], flip(func(n int) int { return n / 3 }))
	s, clock := newScrubber(t, st, dir, Config{})
	if r := runPass(t, s, true); r.Pending != 1 {
		t.Fatalf("pending %d after the pass", r.Pending)
	}
	s.recheck(context.Background())
	if r := s.Report(10); r.Pending != 1 || r.Totals.Repaired != 0 {
		t.Fatalf("an unchanged record must keep its finding: %+v", r)
	}

	// Saved and loaded again, as a restarted peer does.
	s.save(true)
	s, _ = newScrubber(t, st, dir, Config{})
	s.cfg.now, s.pace.now, s.cfg.sleep, s.pace.sleep = clock.now, clock.now, clock.sleep, clock.sleep
	if r := s.Report(10); r.Pending != 1 || r.Last == nil {
		t.Fatalf("after a restart: %+v", r)
	}

	id, err := st.StageShard(context.Background(), bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RepairCommit(context.Background(), o, []string{id}); err != nil {
		t.Fatal(err)
	}
	s.recheck(context.Background())
	if r := s.Report(10); r.Pending != 0 || r.Totals.Repaired != 1 {
		t.Fatalf("after the repair: %+v", r)
	}

	o2 := put(t, st, "gone", false, testBlock)
	rewrite(t, files(t, dir, "part.")[0], flip(func(n int) int { return n / 2 })) // one of the two part files
	rewrite(t, files(t, dir, "part.")[1], flip(func(n int) int { return n / 2 }))
	runPass(t, s, true)
	if r := s.Report(10); r.Pending != 2 {
		t.Fatalf("pending %d, want both keys", r.Pending)
	}
	tomb := *o2
	tomb.Deleted, tomb.Parts, tomb.Size, tomb.Stamp.Nanos = true, nil, 0, o2.Stamp.Nanos+1
	if err := st.Commit(context.Background(), &tomb, nil); err != nil {
		t.Fatal(err)
	}
	s.recheck(context.Background())
	if r := s.Report(10); r.Pending != 1 || r.Findings[0].Key != "k" {
		t.Fatalf("a deleted key must drop its finding: %+v", r)
	}
}

// Every pass holds below the byte and object caps, and a scheduled pass
// spreads over its share of the interval; all measured on the scrubber's
// own (fake) clock.
func TestRateLimits(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		cfg      Config
		manual   bool
		objects  int
		size     int
		min, max time.Duration
	}{
		// 8 objects of 1 MiB: 8 shard files of 256 KiB + checksums = 2 MiB.
		{"bytes", Config{BytesPerSec: 256 << 10, ObjectsPerSec: 1000}, true, 8, mib, 7 * time.Second, 9 * time.Second},
		{"objects", Config{BytesPerSec: 100 * mib, ObjectsPerSec: 4}, true, 21, 100, 5 * time.Second, 5*time.Second + 100*time.Millisecond},
		{"unpaced", Config{BytesPerSec: 100 * mib, ObjectsPerSec: 1000}, true, 10, 1000, 0, 100 * time.Millisecond},
		// 10 equal objects, 90% of 1000 s: the last starts at 9/10 of 900 s.
		{"paced to the interval", Config{Interval: 1000 * time.Second, BytesPerSec: 100 * mib, ObjectsPerSec: 1000}, false, 10, 1000,
			800 * time.Second, 900 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, dir := openStore(t)
			for i := range tc.objects {
				put(t, st, fmt.Sprintf("k%02d", i), false, tc.size)
			}
			s, clock := newScrubber(t, st, dir, tc.cfg)
			start := clock.t
			r := runPass(t, s, tc.manual)
			took := clock.t.Sub(start)
			if took < tc.min || took > tc.max {
				t.Fatalf("pass took %v on the scrubber's clock, want %v to %v (%d bytes)", took, tc.min, tc.max, r.Last.BytesChecked)
			}
			if r.Last.ObjectsChecked != int64(tc.objects) || r.Pending != 0 {
				t.Fatalf("pass: %+v", r.Last)
			}
			if want := r.Last.Started.Add(s.cfg.Interval); !r.NextPass.Equal(want) {
				t.Fatalf("next pass %v, want an interval after the start, %v", r.NextPass, want)
			}
		})
	}
}

// A restarted peer resumes its pass after the last key it checked.
func TestResume(t *testing.T) {
	st, dir := openStore(t)
	for i := range 10 {
		put(t, st, fmt.Sprintf("k%02d", i), true, 100)
	}
	s, _ := newScrubber(t, st, dir, Config{})
	s.begin(true)
	s.mu.Lock()
	s.st.Pass.CursorBucket, s.st.Pass.CursorKey = testBucket, "k05"
	s.mu.Unlock()
	s.save(true)
	s, _ = newScrubber(t, st, dir, Config{})
	if !s.inPass() {
		t.Fatal("the pass in progress was not restored")
	}
	if err := s.pass(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if r := s.Report(0); r.Last == nil || r.Last.ObjectsChecked != 4 || r.Last.Objects != 10 {
		t.Fatalf("resumed pass: %+v", r.Last)
	}
}
