package erasure

import "sync"

// pools maps a buffer size to a *sync.Pool of *[]byte of that size. The pools
// are package-wide rather than per Coder because callers may build a Coder
// per object; sizes are few (one per code and block size in use).
var pools sync.Map

func poolFor(size int) *sync.Pool {
	if p, ok := pools.Load(size); ok {
		return p.(*sync.Pool)
	}
	p, _ := pools.LoadOrStore(size, &sync.Pool{New: func() any {
		b := make([]byte, size)
		return &b
	}})
	return p.(*sync.Pool)
}

// getBuf returns a buffer of exactly size bytes with arbitrary contents.
func getBuf(size int) *[]byte {
	b := poolFor(size).Get().(*[]byte)
	*b = (*b)[:size]
	return b
}

// putBuf recycles a buffer from getBuf. The caller must not use it again.
func putBuf(b *[]byte) {
	if b == nil {
		return
	}
	*b = (*b)[:cap(*b)]
	poolFor(len(*b)).Put(b)
}
