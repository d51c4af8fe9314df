package object

import (
	"testing"

	"tessera/sched"
)

// TestWindowMemoryReturnedAfterFailedFetches: GETs whose fetches from two
// peers fail (damaged shard bytes, peers down, streams that stall: each a
// failed fetch the policy replaces) hand back every byte of window memory they took, so
// that failures cannot use the bound up and leave later GETs waiting.
func TestWindowMemoryReturnedAfterFailedFetches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fault
	}{{"damaged shards", faultGarbage}, {"peers down", faultDown}, {"streams stall", faultHangRead}} {
		t.Run(tc.name, func(t *testing.T) { windowMemoryAfterFaults(t, tc.fault) })
	}
}

func windowMemoryAfterFaults(t *testing.T, f fault) {
	const span = 4 * blockChunk
	pool, err := NewFetchPool(sched.DefaultPolicy, sched.Config{Slots: 8, HedgeRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	winCost := windowCost(4, window{bufCap: chunkCap(span)})
	l, fc := newTestLayer(t, func(c *Config) { c.Pool, c.FetchWindow, c.WindowMemory = pool, 2*span, 3*winCost })
	data := randBytes(9, 24*testBlock)
	put(t, l, "k", data)
	for _, id := range fc.ids[:2] {
		fc.peers[id].setFault(f)
	}
	for range 4 {
		concurrentGets(t, l, 8, data)
	}
	if used, _, _ := l.winMem.stats(); used != 0 {
		t.Errorf("window memory still held after GETs with failed fetches: %d bytes", used)
	}
}
