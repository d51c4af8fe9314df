package object

import (
	"context"
	"sync"
)

// DefaultWindowMemory is the default Config.WindowMemory: sixteen windows
// of a 4+2 code's 2 MiB chunks, what eight large GETs with read-ahead
// held before the bound existed, and about where those GETs stopped
// getting faster on the 2-core machines this is measured on.
const DefaultWindowMemory = 128 << 20

// windowMemory bounds the bytes of chunk buffers that all the GETs of a
// layer hold at once, and keeps the idle ones for reuse within the same
// bound. A window reserves k chunks before its fetches are
// submitted, waiting in line while the bound is reached; a read-ahead
// window only takes room that is free with nobody waiting (tryReserve),
// so a GET never waits for memory while it holds some: without that, GETs
// that each held one window and waited for their next could wait on each
// other forever. Fetches beyond k (a hedge, a redundant policy's extra
// fetches) take room without waiting (buffer), so used may pass the limit
// by those. Safe for concurrent use.
type windowMemory struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	peak    int64
	waiters []*memWaiter // first in line first
	free    chunkFree    // the buffers, at most limit bytes of them
}

type memWaiter struct {
	n     int64
	ready chan struct{} // closed once n is granted
}

func newWindowMemory(limit int64) *windowMemory {
	return &windowMemory{limit: limit}
}

// clamp caps a request at the limit, so one window larger than the whole
// bound still runs, alone.
func (m *windowMemory) clamp(n int64) int64 { return min(n, m.limit) }

// reserve waits until n bytes fit under the limit and every earlier
// waiter has been served, then takes them; it returns the bytes taken,
// which the caller gives back with release. The caller must hold no other
// reservation while it waits.
func (m *windowMemory) reserve(ctx context.Context, n int64) (int64, error) {
	n = m.clamp(n)
	m.mu.Lock()
	if len(m.waiters) == 0 && m.used+n <= m.limit {
		m.add(n)
		m.mu.Unlock()
		return n, nil
	}
	w := &memWaiter{n: n, ready: make(chan struct{})}
	m.waiters = append(m.waiters, w)
	m.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile: give it back
		m.used -= n
	default:
		for i, x := range m.waiters {
			if x == w {
				m.waiters = append(m.waiters[:i], m.waiters[i+1:]...)
				break
			}
		}
	}
	m.grant() // a waiter behind w may fit now
	return 0, ctx.Err()
}

// tryReserve takes n bytes if they fit now and nobody waits, and returns
// the bytes taken, 0 if none.
func (m *windowMemory) tryReserve(n int64) int64 {
	n = m.clamp(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.waiters) > 0 || m.used+n > m.limit {
		return 0
	}
	m.add(n)
	return n
}

// buffer returns a chunk buffer of n bytes with arbitrary contents and
// the capacity of chunkCap(size), size >= n, first taking extra bytes
// whatever the limit (a fetch beyond those its window reserved).
func (m *windowMemory) buffer(n, size, extra int64) *[]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.add(extra)
	return m.free.get(n, size, m.limit)
}

// release gives back n bytes and the buffers bufs, which the caller must
// not use again. Buffers are kept idle for the next windows, as long as
// all the buffers made, idle and in use, stay within the limit.
func (m *windowMemory) release(n int64, bufs []*[]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used -= n
	for _, b := range bufs {
		m.free.put(b, m.limit)
	}
	m.grant()
}

// stats returns the bytes held now, the most ever held at once and the
// bytes of idle buffers kept.
func (m *windowMemory) stats() (used, peak, idle int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.peak, m.free.idle
}

func (m *windowMemory) add(n int64) {
	m.used += n
	m.peak = max(m.peak, m.used)
}

// grant serves waiters in order while the first one fits. Caller holds mu.
func (m *windowMemory) grant() {
	for len(m.waiters) > 0 && m.used+m.waiters[0].n <= m.limit {
		w := m.waiters[0]
		m.waiters = m.waiters[1:]
		m.add(w.n)
		close(w.ready)
	}
}
