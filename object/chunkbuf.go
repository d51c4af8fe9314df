package object

import "math/bits"

// Chunk buffers are recycled by power-of-two size class, from
// minPooledChunk up to maxPooledChunk: a large GET downloads a window of
// chunks after another, and fresh allocations for each would leave the
// heap growing between collections to several times the two windows a
// read holds (the 1 GiB GET of e2e TestLargeObjectMemory went past its
// 100 MiB budget that way). Smaller chunks are left to the allocator;
// larger ones (a single block whose chunk exceeds the window) are rare.
//
// The idle buffers are kept by the layer's window memory, which counts
// them against its limit (see chunkFree), not in a sync.Pool: a pool
// keeps whatever the busiest moment left in it until two collections
// pass, and those buffers, being live, raise the heap goal that decides
// when the collections come, so under steady large GETs the pool and the
// heap grew together to several times what the GETs held at once.
const (
	minPooledChunk = 64 << 10
	chunkClasses   = 8 // 64 KiB .. 8 MiB
	maxPooledChunk = minPooledChunk << (chunkClasses - 1)
)

// chunkClass is the pool index of buffers for n bytes, or -1 for none.
func chunkClass(n int64) int {
	if n < minPooledChunk/2 || n > maxPooledChunk {
		return -1
	}
	return max(0, bits.Len64(uint64(n-1))-bits.Len(minPooledChunk-1))
}

// chunkCap is the capacity of a buffer for n bytes: the bytes it holds.
func chunkCap(n int64) int64 {
	if c := chunkClass(n); c >= 0 {
		return minPooledChunk << c
	}
	return n
}

// chunkFree hands out chunk buffers and keeps the idle ones by size
// class, so that the buffers it made and has not dropped, in use and
// idle, come to at most a limit. Not safe for concurrent use:
// windowMemory guards it.
type chunkFree struct {
	lists [chunkClasses][]*[]byte
	idle  int64 // capacity of the idle buffers
	inUse int64 // capacity of the buffers handed out
}

// get returns a buffer of n bytes with arbitrary contents, of the class
// of size >= n: an idle one, or else a new one, after dropping idle
// buffers of other classes as needed to keep all of them within limit
// bytes.
func (f *chunkFree) get(n, size, limit int64) *[]byte {
	c := chunkClass(size)
	size = chunkCap(size)
	f.inUse += size
	if c < 0 {
		b := make([]byte, n, size)
		return &b
	}
	if l := f.lists[c]; len(l) > 0 {
		p := l[len(l)-1]
		l[len(l)-1] = nil
		f.lists[c] = l[:len(l)-1]
		f.idle -= size
		*p = (*p)[:n]
		return p
	}
	f.trim(limit - f.inUse)
	b := make([]byte, n, size)
	return &b
}

// put takes back a buffer from get, kept idle unless the buffers in use
// and idle would then exceed limit bytes (a fetch beyond a window's
// reservation made them do so), in which case the collector has it. The
// caller must not use p again.
func (f *chunkFree) put(p *[]byte, limit int64) {
	size := int64(cap(*p))
	f.inUse -= size
	c := chunkClass(size)
	if c < 0 || size != minPooledChunk<<c || f.idle+f.inUse+size > limit {
		return
	}
	*p = (*p)[:size]
	f.lists[c] = append(f.lists[c], p)
	f.idle += size
}

// trim drops idle buffers, largest first, until at most limit bytes are
// idle.
func (f *chunkFree) trim(limit int64) {
	limit = max(limit, 0)
	for c := chunkClasses - 1; c >= 0 && f.idle > limit; c-- {
		for l := f.lists[c]; len(l) > 0 && f.idle > limit; l = f.lists[c] {
			f.idle -= int64(cap(*l[len(l)-1]))
			l[len(l)-1] = nil
			f.lists[c] = l[:len(l)-1]
		}
	}
}
