package object

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"tessera/sched"
)

// slowWriter is a client that reads its response slowly, so a GET holds
// its windows while it writes.
type slowWriter struct {
	buf   bytes.Buffer
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.buf.Write(p)
}

// Large GETs at once hold no more chunk buffers than Config.WindowMemory,
// by the layer's own count of the buffers they download into, while a GET
// alone still reads one window ahead. Without the bound every GET held
// two windows: 16 GETs here would hold 16 x 2 x 4 chunks.
func TestWindowMemoryBoundsConcurrentGets(t *testing.T) {
	const (
		span = 4 * blockChunk // shard bytes per window: 4 blocks
		size = 24 * testBlock // 6 windows per GET
	)
	winCost := windowCost(4, window{bufCap: chunkCap(span)})
	for _, tc := range []struct {
		name      string
		gets      int
		limit     int64
		wantPeak  int64 // exact peak, or 0 for any up to limit
		wantAhead bool  // some GET fetched a window ahead
	}{
		{name: "alone reads ahead", gets: 1, limit: DefaultWindowMemory, wantPeak: 2 * winCost},
		{name: "16 GETs in 3 windows", gets: 16, limit: 3 * winCost, wantAhead: true},
		{name: "16 GETs in 1 window", gets: 16, limit: winCost},
		// One window larger than the limit runs, alone.
		{name: "limit under one window", gets: 4, limit: winCost / 3, wantPeak: winCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No hedges: every window downloads exactly k chunks.
			pool, err := NewFetchPool(sched.DefaultPolicy, sched.Config{Slots: 8, HedgeRate: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			l, _ := newTestLayer(t, func(c *Config) { c.Pool, c.FetchWindow, c.WindowMemory = pool, 2*span, tc.limit })
			data := randBytes(7, size)
			put(t, l, "k", data)
			concurrentGets(t, l, tc.gets, data)
			used, peak, idle := l.winMem.stats()
			if used != 0 {
				t.Errorf("window memory still held after every GET: %d bytes", used)
			}
			if idle+used > max(tc.limit, winCost) {
				t.Errorf("%d bytes of idle buffers kept, limit %d", idle, tc.limit)
			}
			if peak > max(tc.limit, winCost) {
				t.Errorf("GETs held %d bytes of chunk buffers at once, limit %d", peak, tc.limit)
			}
			if tc.wantPeak != 0 && peak != tc.wantPeak {
				t.Errorf("peak %d bytes, want %d (windows of %d)", peak, tc.wantPeak, winCost)
			}
			if tc.wantAhead && peak < 2*winCost {
				t.Errorf("peak %d bytes: no GET read ahead with room for %d windows", peak, tc.limit/winCost)
			}
		})
	}
}

func concurrentGets(t *testing.T, l *Layer, n int, want []byte) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &slowWriter{delay: time.Millisecond}
			err := l.GetObject(context.Background(), testBucket, "k", func(ObjectInfo) (io.Writer, int64, int64, error) {
				return w, 0, -1, nil
			})
			if err == nil && !bytes.Equal(w.buf.Bytes(), want) {
				err = fmt.Errorf("%d bytes differ from the %d put", w.buf.Len(), len(want))
			}
			if err != nil {
				errs <- fmt.Errorf("get %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A GET waiting for window memory gives up when its context ends, and
// the room it was waiting for goes to the next in line.
func TestWindowMemoryWaitEndsWithContext(t *testing.T) {
	m := newWindowMemory(100)
	if n, err := m.reserve(context.Background(), 80); err != nil || n != 80 {
		t.Fatalf("reserve 80 of 100: %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() {
		_, err := m.reserve(ctx, 50)
		gaveUp <- err
	}()
	waitFor(t, func() bool { m.mu.Lock(); defer m.mu.Unlock(); return len(m.waiters) == 1 })
	if n := m.tryReserve(10); n != 0 {
		t.Errorf("read-ahead took %d bytes past a waiting GET", n)
	}
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("reserve returned no error after its context ended")
	}
	if n := m.tryReserve(20); n != 20 {
		t.Errorf("tryReserve 20 of the 20 free: got %d", n)
	}
	m.release(100, nil)
	if used, peak, _ := m.stats(); used != 0 || peak != 100 {
		t.Errorf("used %d peak %d, want 0 and 100", used, peak)
	}
}

// The chunk buffers made and not dropped, in use and idle, stay within
// the limit whatever mix of sizes is asked for, and a buffer given back
// is the next one of its size handed out.
func TestChunkFreeStaysWithinLimit(t *testing.T) {
	const limit = 8 << 20
	var f chunkFree
	var held []*[]byte
	for i, n := range []int64{2 << 20, 2 << 20, 1 << 20, 2 << 20, 512 << 10, 2 << 20, 1 << 20} {
		held = append(held, f.get(n, n, limit))
		if f.idle+f.inUse > limit {
			t.Fatalf("get %d (%d bytes): %d idle + %d in use > limit %d", i, n, f.idle, f.inUse, limit)
		}
		if len(held) == 3 { // give back all but the last: room for the rest
			for _, b := range held[:2] {
				f.put(b, limit)
			}
			held = held[2:]
		}
	}
	for _, b := range held {
		f.put(b, limit)
	}
	if f.inUse != 0 || f.idle > limit {
		t.Fatalf("all given back: %d in use, %d idle", f.inUse, f.idle)
	}
	b := f.get(300<<10, 2<<20, limit)
	if len(*b) != 300<<10 || cap(*b) != 2<<20 {
		t.Fatalf("got len %d cap %d, want 300 KiB of a 2 MiB buffer", len(*b), cap(*b))
	}
	p := &(*b)[:1][0]
	f.put(b, limit)
	if again := f.get(2<<20, 2<<20, limit); &(*again)[0] != p {
		t.Error("a buffer given back was not the next of its size handed out")
	}
}
