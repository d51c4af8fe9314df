package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

type stepKind int

const (
	withData stepKind = iota
	withInline
	tombstone
)

type step struct {
	st   meta.Stamp
	kind stepKind
	want error
}

func payload(st meta.Stamp) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%d/%s;", st.Nanos, st.Writer)), 100)
}

func (st step) commit(t *testing.T, s *Store, key string) error {
	switch st.kind {
	case withInline:
		return s.Commit(ctx, inlined("bkt", key, st.st, payload(st.st)), nil)
	case tombstone:
		return s.Commit(ctx, object("bkt", key, st.st), nil)
	}
	return put(t, s, "bkt", key, st.st, payload(st.st), payload(st.st)[:7])
}

func TestCommitSequences(t *testing.T) {
	a1, a2, a3 := stamp(100, "a"), stamp(200, "a"), stamp(300, "a")
	cases := []struct {
		name  string
		steps []step
	}{
		{"first commit", []step{{a1, withData, nil}}},
		{"newer overwrites", []step{{a1, withData, nil}, {a2, withData, nil}}},
		{"older is stale", []step{{a2, withData, nil}, {a1, withData, meta.ErrStale}}},
		{"equal is stale", []step{{a2, withData, nil}, {a2, withData, meta.ErrStale}}},
		{"writer breaks ties", []step{{stamp(5, "a"), withData, nil}, {stamp(5, "b"), withData, nil}, {stamp(5, "a"), withData, meta.ErrStale}}},
		{"writers that render alike", []step{{stamp(7, "w.1"), withData, nil}, {stamp(7, "w_1"), withData, nil}}},
		{"tombstone over data", []step{{a1, withData, nil}, {a2, tombstone, nil}}},
		{"stale under tombstone", []step{{a2, tombstone, nil}, {a1, withData, meta.ErrStale}}},
		{"data over tombstone", []step{{a1, tombstone, nil}, {a2, withData, nil}}},
		{"inline then data then inline", []step{{a1, withInline, nil}, {a2, withData, nil}, {a3, withInline, nil}}},
		{"stale inline keeps data", []step{{a2, withData, nil}, {a1, withInline, meta.ErrStale}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			var win *step
			for i := range tc.steps {
				st := &tc.steps[i]
				wantErr(t, fmt.Sprintf("step %d", i), st.commit(t, s, "k"), st.want)
				if st.want == nil {
					win = st
				}
			}
			// Stale commits of data keep their staged files for a retry.
			kept := 0
			for _, st := range tc.steps {
				if st.kind == withData && st.want != nil {
					kept += 2 // two parts each
				}
			}
			if n := tmpEntries(t, s); n != kept {
				t.Fatalf("%d staged files left, want the %d of stale commits", n, kept)
			}
			if _, err := s.SweepStaging(ctx, -time.Second); err != nil {
				t.Fatal(err)
			}
			settle(t, s, "bkt", "k", win.st)
			checkWinner(t, s, "k", *win, tc.steps)
			checkWinner(t, reopen(t, s), "k", *win, tc.steps)
		})
	}
}

// checkWinner asserts the key shows exactly the winning step: its record,
// its bytes, its listing entry, and no data of any other version.
func checkWinner(t *testing.T, s *Store, key string, win step, all []step) {
	t.Helper()
	o, err := s.ReadMeta(ctx, "bkt", key)
	if err != nil {
		t.Fatalf("read meta: %v", err)
	}
	if o.Stamp != win.st || o.Deleted != (win.kind == tombstone) || o.Inlined != (win.kind == withInline) {
		t.Fatalf("record %+v, want stamp %v kind %d", o, win.st, win.kind)
	}
	switch win.kind {
	case withInline:
		if !bytes.Equal(o.Inline, payload(win.st)) {
			t.Fatalf("inline bytes differ")
		}
	case withData:
		got, err := readShard(t, s, "bkt", key, win.st, 1)
		if err != nil || !bytes.Equal(got, payload(win.st)) {
			t.Fatalf("part 1: %v (%d bytes)", err, len(got))
		}
		got, err = readShard(t, s, "bkt", key, win.st, 2)
		if err != nil || !bytes.Equal(got, payload(win.st)[:7]) {
			t.Fatalf("part 2: %v %q", err, got)
		}
	}
	s.reapAll() // the losers' grace periods have passed
	wantDirs := 0
	if win.kind == withData {
		wantDirs = 1
	}
	if d := dataDirs(t, s, "bkt", key); len(d) != wantDirs {
		t.Fatalf("data dirs %v, want %d", d, wantDirs)
	}
	for _, st := range all {
		if st.st == win.st {
			continue
		}
		if _, err := readShard(t, s, "bkt", key, st.st, 1); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("loser %v still readable: %v", st.st, err)
		}
	}
	ents, err := s.List(ctx, "bkt", "", "", 0, "")
	if err != nil || len(ents) != 1 || ents[0].Stamp != win.st || ents[0].Deleted != (win.kind == tombstone) {
		t.Fatalf("list: %v %+v", err, ents)
	}
	if tmpEntries(t, s) != 0 {
		t.Fatalf("staging not empty after commits")
	}
}

func TestCommitErrors(t *testing.T) {
	s := newStore(t)
	id := stage(t, s, []byte("x"))
	good := func() *meta.Object { return object("bkt", "k", stamp(1, "w"), []byte("x")) }
	cases := []struct {
		name   string
		o      *meta.Object
		staged []string
		want   error
	}{
		{"nil record", nil, nil, ErrInvalidArgument},
		{"no bucket", object("nope", "k", stamp(1, "w"), []byte("x")), []string{id}, meta.ErrBucketNotFound},
		{"bad bucket", object("../x", "k", stamp(1, "w"), []byte("x")), []string{id}, ErrInvalidArgument},
		{"empty key", object("bkt", "", stamp(1, "w"), []byte("x")), []string{id}, ErrInvalidArgument},
		{"zero stamp", object("bkt", "k", meta.Stamp{}, []byte("x")), []string{id}, ErrInvalidArgument},
		{"missing staged", good(), nil, ErrInvalidArgument},
		{"staged for tombstone", object("bkt", "k", stamp(1, "w")), []string{id}, ErrInvalidArgument},
		{"bad staged id", good(), []string{"../../etc/passwd"}, ErrInvalidArgument},
		{"unknown staged id", good(), []string{"6f1c2a3e-0000-4000-8000-000000000000"}, ErrStagedNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, "commit", s.Commit(ctx, tc.o, tc.staged), tc.want)
			if _, err := s.ReadMeta(ctx, "bkt", "k"); !errors.Is(err, meta.ErrNotFound) {
				t.Fatalf("failed commit left a record: %v", err)
			}
		})
	}
	// The staged file survived every failure and still commits.
	wantErr(t, "commit", s.Commit(ctx, good(), []string{id}), nil)
}

func TestConcurrentCommitsOneKey(t *testing.T) {
	s := newStore(t)
	const n = 16
	var wg sync.WaitGroup
	var stale atomic.Int64
	for i := 1; i <= n; i++ {
		st := stamp(int64(i), "w")
		id := stage(t, s, payload(st))
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Commit(ctx, object("bkt", "hot", st, payload(st)), []string{id})
			if errors.Is(err, meta.ErrStale) {
				stale.Add(1)
			} else if err != nil {
				t.Errorf("commit %v: %v", st, err)
			}
		}()
	}
	wg.Wait()
	win := stamp(n, "w")
	o, err := s.ReadMeta(ctx, "bkt", "hot")
	if err != nil || o.Stamp != win {
		t.Fatalf("final record %v %+v, want %v", err, o, win)
	}
	if got, err := readShard(t, s, "bkt", "hot", win, 1); err != nil || !bytes.Equal(got, payload(win)) {
		t.Fatalf("final data: %v", err)
	}
	settle(t, s, "bkt", "hot", win)
	s.reapAll()
	if d := dataDirs(t, s, "bkt", "hot"); len(d) != 1 {
		t.Fatalf("data dirs %v", d)
	}
	// Stale commits keep their staged files for a retry above the winner.
	if got := tmpEntries(t, s); got != int(stale.Load()) {
		t.Fatalf("%d staged files left, want the %d of stale commits", got, stale.Load())
	}
}

func TestOpenShardRange(t *testing.T) {
	s := newStore(t)
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	st := stamp(1, "w")
	if err := put(t, s, "bkt", "k", st, data); err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	cases := []struct {
		part           int
		offset, length int64
		want           []byte
		err            error
	}{
		{1, 0, -1, data, nil},
		{1, 10, 5, data[10:15], nil},
		{1, size, 0, []byte{}, nil},
		{1, size, -1, []byte{}, nil},
		{1, size - 3, 3, data[size-3:], nil},
		{1, size - 3, 4, nil, meta.ErrCorrupt},
		{1, size + 1, -1, nil, meta.ErrCorrupt},
		{1, -1, 3, nil, ErrInvalidArgument},
		{2, 0, -1, nil, meta.ErrNotFound},
		{0, 0, -1, nil, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("part%d@%d+%d", tc.part, tc.offset, tc.length), func(t *testing.T) {
			rc, n, err := s.OpenShard(ctx, "bkt", "k", st, tc.part, tc.offset, tc.length)
			wantErr(t, "open", err, tc.err)
			if err != nil {
				return
			}
			defer rc.Close()
			got := make([]byte, n+10)
			m, _ := readFull(rc, got)
			if int64(m) != n || !bytes.Equal(got[:m], tc.want) {
				t.Fatalf("got %q (n=%d), want %q", got[:m], n, tc.want)
			}
		})
	}
	if _, _, err := s.OpenShard(ctx, "bkt", "k", stamp(2, "w"), 1, 0, -1); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("other version: %v", err)
	}
}

func readFull(r interface{ Read([]byte) (int, error) }, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A commit refused as stale names the stamp it lost to and keeps its
// staged file for the writer's retry above it, for staleKeep; after that
// the file is removed, as no commit will take it any more.
func TestStaleCommitKeepsStagedForRetry(t *testing.T) {
	cases := []struct {
		name  string
		retry bool // the writer retries above the held stamp in time
	}{{"retried in time", true}, {"never retried", false}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			var drops []func()
			s.afterFunc = func(d time.Duration, f func()) {
				if d != staleKeep {
					t.Errorf("drop after %v, want %v", d, staleKeep)
				}
				drops = append(drops, f)
			}
			held := stamp(200, "ahead")
			wantErr(t, "newer", put(t, s, "bkt", "k", held, []byte("newer")), nil)
			body := []byte("retried")
			id := stage(t, s, body)
			err := s.Commit(ctx, object("bkt", "k", stamp(100, "behind"), body), []string{id})
			if got, ok := meta.HeldStamp(err); !ok || got != held {
				t.Fatalf("stale commit: %v, want a refusal naming %v", err, held)
			}
			if len(drops) != 1 || tmpEntries(t, s) != 1 {
				t.Fatalf("%d drops scheduled, %d staged files: want the file kept and one drop", len(drops), tmpEntries(t, s))
			}
			retry := object("bkt", "k", stamp(held.Nanos+1, "behind"), body)
			if tc.retry {
				wantErr(t, "retry", s.Commit(ctx, retry, []string{id}), nil)
			}
			drops[0]() // staleKeep has passed
			if n := tmpEntries(t, s); n != 0 {
				t.Fatalf("%d staged files left", n)
			}
			if !tc.retry {
				wantErr(t, "late retry", s.Commit(ctx, retry, []string{id}), ErrStagedNotFound)
				return
			}
			if got, err := readShard(t, s, "bkt", "k", retry.Stamp, 1); err != nil || !bytes.Equal(got, body) {
				t.Fatalf("retried version: %q, %v", got, err)
			}
		})
	}
}
