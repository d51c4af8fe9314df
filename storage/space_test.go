package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tessera/meta"
)

func TestReserve(t *testing.T) {
	cases := []struct{ capacity, want uint64 }{
		{0, 4 << 20},
		{64 << 20, 4 << 20},
		{10 << 30, 10 << 30 / 100},
		{1 << 40, 1 << 30},
	}
	for _, c := range cases {
		if got := Reserve(c.capacity); got != c.want {
			t.Errorf("Reserve(%d) = %d, want %d", c.capacity, got, c.want)
		}
	}
}

// TestFullAfterENOSPC: a write error for lack of space makes the store
// full for fullHold, refusing new shards with ErrDiskFull before reading
// them; other errors and its own refusals do not; once a reserve's worth
// of space is freed, or past fullHold (with room on the disk), it takes
// shards again.
func TestFullAfterENOSPC(t *testing.T) {
	s := newStore(t)
	if sp, err := s.Space(); err != nil || sp.Full || sp.Capacity == 0 {
		t.Fatalf("fresh store: %+v, %v", sp, err)
	}
	s.NoteError(fmt.Errorf("commit: %w", errors.New("some other failure")))
	if sp, _ := s.Space(); sp.Full {
		t.Fatal("an unrelated error made the store full")
	}
	s.NoteError(ioErr("write record", syscall.ENOSPC))
	if sp, _ := s.Space(); !sp.Full {
		t.Fatal("ENOSPC did not make the store full")
	}
	past := time.Now().Add(-fullHold + time.Second).UnixNano() // 1 s of the hold left
	s.fullAt.Store(past)
	body := &countingReader{r: bytes.NewReader(make([]byte, 1<<20))}
	_, err := s.StageShard(ctx, body)
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("stage on a full store: %v, want ErrDiskFull", err)
	}
	if body.n != 0 {
		t.Fatalf("a full store read %d bytes of a shard it refused", body.n)
	}
	// The shard API server notes every error it answers with; its own
	// refusal must not restart the hold.
	s.NoteError(err)
	if got := s.fullAt.Load(); got != past {
		t.Fatal("a refusal while full restarted the full hold")
	}
	// Within the hold, free space grown by a reserve since the ENOSPC
	// (space was freed) ends it.
	sp, _ := s.Space()
	if sp.Free <= Reserve(sp.Capacity) {
		t.Skipf("the test filesystem has only %d bytes free", sp.Free)
	}
	s.fullFree.Store(sp.Free - Reserve(sp.Capacity) - 1)
	if sp, _ := s.Space(); sp.Full {
		t.Fatal("still full although a reserve's worth of space came back")
	}
	s.fullFree.Store(sp.Free)
	if sp, _ := s.Space(); !sp.Full {
		t.Fatal("the hold ended with no space freed")
	}
	s.fullAt.Store(time.Now().Add(-fullHold - time.Second).UnixNano())
	if sp, _ := s.Space(); sp.Full {
		t.Fatal("still full past fullHold")
	}
	if _, err := s.StageShard(ctx, bytes.NewReader([]byte("shard"))); err != nil {
		t.Fatalf("stage once space is back: %v", err)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReplacedDataGivesWayToWrites: versions replaced and settled wait out
// their grace period on disk, but not at the cost of writes: with free
// space short the reaper removes them at once, and a write that would be
// refused for lack of space first removes them.
func TestReplacedDataGivesWayToWrites(t *testing.T) {
	const capacity = 100 << 30
	var free atomic.Uint64
	free.Store(capacity / 2)
	cfg := Config{Logger: DefaultConfig().Logger, RetireGrace: time.Hour,
		statfs: func() (uint64, uint64, error) { return capacity, free.Load(), nil }}
	s := openWith(t, t.TempDir(), cfg)
	mustMakeBucket(t, s, "bkt")
	replace := func(key string, a, b meta.Stamp) {
		t.Helper()
		for _, st := range []meta.Stamp{a, b} {
			if err := put(t, s, "bkt", key, st, payload(st)); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, s, "bkt", key, b)
		if _, err := readShard(t, s, "bkt", key, a, 1); err != nil {
			t.Fatalf("replaced version of %s within its grace: %v", key, err)
		}
	}
	replace("short", stamp(1, "w"), stamp(2, "w"))
	free.Store(capacity / 30) // under 5 %: the reaper's own check
	deadline := time.Now().Add(10 * time.Second)
	for s.retiredCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reaper left replaced data in place with free space short")
		}
		time.Sleep(20 * time.Millisecond)
	}
	free.Store(capacity / 2)
	replace("full", stamp(3, "w"), stamp(4, "w"))
	free.Store(Reserve(capacity) / 2) // full: a stage first reaps
	if _, err := s.StageShard(ctx, bytes.NewReader([]byte("x"))); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("stage on a full disk: %v, want ErrDiskFull", err)
	}
	if n := s.retiredCount(); n != 0 {
		t.Fatalf("%d replaced dirs still queued after a write was refused for space", n)
	}
	if _, err := readShard(t, s, "bkt", "full", stamp(3, "w"), 1); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("replaced version after the refusal: %v, want not found", err)
	}
}
