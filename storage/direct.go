package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"unsafe"
)

// Staged shards are written past the page cache (O_DIRECT) where the
// filesystem allows it, in whole aligned blocks, the tail under a block
// with it switched off. On these machines a buffered write cost 2 to 3 s
// of kernel CPU per GB written, nearly all of it filling new page-cache
// pages, against 0.2 s direct (dd, 2 GB, BENCHMARKS.md): more than every
// other cost of a large PUT together, which writes 1.5 bytes of shards
// per byte of object. MinIO writes its shards the same way. What is read
// back soon comes from the device once, then from the page cache as
// before.

// directAlign is the alignment O_DIRECT asks of buffers, offsets and
// lengths: the logical block size of every disk in use, 4096 at most.
const directAlign = 4096

// stageBlock is the size of one staged write: 1 MiB, a fourth of the
// context switches of 256 KiB writes, each of which blocks its thread
// until the device has the bytes (PUT 16 MiB against MinIO in one window:
// 1.01-1.13 with 1 MiB, 0.95-1.09 with 256 KiB; BENCHMARKS.md).
const stageBlock = 1 << 20

// stageBufs holds stageBlock buffers aligned to directAlign.
var stageBufs = sync.Pool{New: func() any {
	raw := make([]byte, stageBlock+directAlign)
	off := directAlign - int(uintptr(unsafe.Pointer(&raw[0]))%directAlign)
	b := raw[off%directAlign : off%directAlign+stageBlock]
	return &b
}}

// writeStaged copies r into f, a new empty file, past the page cache when
// f's filesystem takes O_DIRECT, else through it, and returns the bytes
// written.
func writeStaged(ctx context.Context, f *os.File, r io.Reader) (int64, error) {
	bp := stageBufs.Get().(*[]byte)
	defer stageBufs.Put(bp)
	buf := *bp
	direct := setDirect(f, true) == nil
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, rerr := io.ReadFull(r, buf)
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			return n, rerr
		}
		whole := m
		if direct && m < len(buf) {
			whole = m - m%directAlign
		}
		if whole > 0 {
			if _, err := f.Write(buf[:whole]); err != nil {
				return n, err
			}
			n += int64(whole)
		}
		if m > whole { // the tail, under one aligned block: through the page cache
			if err := setDirect(f, false); err != nil {
				return n, err
			}
			direct = false
			if _, err := f.Write(buf[whole:m]); err != nil {
				return n, err
			}
			n += int64(m - whole)
		}
		if rerr != nil {
			return n, nil
		}
	}
}
